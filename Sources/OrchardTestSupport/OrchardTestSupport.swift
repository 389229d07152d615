import Foundation

/// Helpers that the tests of several modules share (not part of any product).
public enum TestPaths {
    /// The package root, found from this file's path (`<root>/Sources/OrchardTestSupport/…`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `<package root>/../shared/vectors`, where the conformance vectors sit next to a checkout (may be absent).
    public static var sharedVectors: URL {
        packageRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors")
    }

    /// The conformance vectors in use: `$ORCHARD_VECTORS_DIR`, else ``sharedVectors``; nil when that directory has no
    /// `manifest.json` (the tests that read them then skip with a message).
    public static let vectors: URL? = {
        let path = ProcessInfo.processInfo.environment["ORCHARD_VECTORS_DIR"] ?? ""
        let url = path.isEmpty ? sharedVectors : URL(fileURLWithPath: path)
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path) ? url : nil
    }()
}

/// A small deterministic generator (SplitMix64), so every run of a seeded test draws the same values.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed before the first draw.
    public var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
