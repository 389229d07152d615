import COpenSSL
import Foundation

/// Bytes that hold a secret (a key, a decrypted payload), never printed.
///
/// A value with copy-on-write storage, as swift-crypto's `SecureBytes`: copies share one heap allocation,
/// which is overwritten with zeros when the last copy lets go of it. ``erase()`` zeros the allocation at once
/// when this value is its only holder; otherwise this value lets go of it and other copies keep theirs.
/// Reading takes no lock, so `x == x` and concurrent comparisons in any order are safe.
public struct SecureBytes: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable,
    ContiguousBytes
{
    private var storage: Storage

    /// A copy of `bytes`; the caller remains responsible for its own copy.
    public init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        storage = Storage(copying: bytes)
    }

    /// `count` bytes from the cryptographic random generator.
    public init(randomCount count: Int) throws(CryptoError) {
        var bytes = try SecureRandom.bytes(count)
        defer { SecureBytes.zero(&bytes) }
        self.init(bytes)
    }

    /// The bytes of a file (a key file); the buffer it was read into is overwritten with zeros.
    public init(contentsOf url: URL) throws {
        var data = try Data(contentsOf: url)
        defer { data.resetBytes(in: 0..<data.count) }
        self.init(data)
    }

    /// Calls `body` with a `Data` that lends these bytes without copying them (for APIs that take `Data`, such
    /// as writing a key file); it must not escape `body`.
    package func withBorrowedData<R>(_ body: (Data) throws -> R) rethrows -> R {
        try withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return try body(Data()) }
            return try body(
                Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.count, deallocator: .none))
        }
    }

    /// The number of bytes (0 once erased).
    public var count: Int { storage.count }

    /// Whether ``erase()`` has been called (or the bytes were empty).
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes; they must not escape it.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage.buffer[0..<storage.count]))
    }

    /// The whole allocation, past ``count`` once erased, for tests that check it was zeroed; valid while this
    /// value (or a copy sharing its storage) lives.
    package var allocation: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage.buffer) }

    /// A plain copy of the bytes, for APIs that need an array; zero it after use with ``zero(_:)``.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    /// Makes this value empty: when it is the only holder of its bytes they are overwritten with zeros now,
    /// else they are zeroed when their last copy goes. Idempotent.
    public mutating func erase() {
        if isKnownUniquelyReferenced(&storage) {
            storage.erase()
        } else {
            storage = Storage(copying: EmptyCollection())
        }
    }

    /// Overwrites an array's bytes with zeros (for temporaries that held a secret).
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 { OPENSSL_cleanse(base, buffer.count) }
        }
    }

    public var description: String { "SecureBytes(\(count) bytes)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["count": count]) }
}

extension SecureBytes {
    /// One heap allocation that never moves, zeroed and freed in `deinit`.
    // Mutated (erase) only through a uniquely referenced SecureBytes, so no other thread can see it change.
    private final class Storage: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        private(set) var count: Int

        init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
            let allocated = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
            allocated.copyBytes(from: bytes)
            buffer = allocated
            count = bytes.count
        }

        deinit {
            Self.cleanse(buffer)
            buffer.deallocate()
        }

        func erase() {
            Self.cleanse(buffer)
            count = 0
        }

        private static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
            if let base = buffer.baseAddress, buffer.count > 0 { OPENSSL_cleanse(base, buffer.count) }
        }
    }
}

extension SecureBytes: Equatable {
    /// Constant-time comparison of contents (the length is not secret).
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
    }
}
