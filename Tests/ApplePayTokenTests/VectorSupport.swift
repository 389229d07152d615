import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardTestSupport

/// The shared conformance vectors: `$ORCHARD_VECTORS_DIR`, else ``TestPaths/sharedVectors`` (beside the checkout,
/// or beside the main checkout of a worktree).
enum Vectors {
    static let directory: URL? = {
        if let path = ProcessInfo.processInfo.environment["ORCHARD_VECTORS_DIR"], !path.isEmpty {
            let url = URL(fileURLWithPath: path)
            return FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path) ? url : nil
        }
        let url = TestPaths.sharedVectors
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path) ? url : nil
    }()

    static var available: Bool { directory != nil }

    typealias Vector = ConformanceVector

    static let all: [Vector] = directory.map(ConformanceVector.all(in:)) ?? []

    static func appleRoot() throws -> TrustAnchor { try ConformanceVector.appleRoot(in: directory!) }
}
