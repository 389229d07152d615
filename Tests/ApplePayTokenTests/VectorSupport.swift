import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardTestSupport

/// The shared conformance vectors: `$ORCHARD_VECTORS_DIR`, else ``TestPaths/sharedVectors`` (beside the checkout,
/// or beside the main checkout of a worktree).
enum Vectors {
    static let directory = TestPaths.vectors

    static var available: Bool { directory != nil }

    typealias Vector = ConformanceVector

    static let all: [Vector] = directory.map(ConformanceVector.all(in:)) ?? []

    static func appleRoot() throws -> TrustAnchor { try ConformanceVector.appleRoot(in: directory!) }
}
