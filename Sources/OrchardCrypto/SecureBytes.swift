import COpenSSL
import Foundation

/// Bytes that hold a secret (a key, a decrypted payload): kept in one heap allocation that is
/// overwritten with zeros when erased or freed, and never printed.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable, ContiguousBytes
{
    // Guarded by `lock`: the only mutation is `erase()`.
    private var pointer: UnsafeMutableRawBufferPointer
    private let lock = NSLock()

    /// A copy of `bytes`; the caller remains responsible for its own copy.
    public init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let pointer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        pointer.copyBytes(from: bytes)
        self.pointer = UnsafeMutableRawBufferPointer(rebasing: pointer[0..<bytes.count])
    }

    /// `count` bytes from the cryptographic random generator.
    public convenience init(randomCount count: Int) throws(CryptoError) {
        var bytes = try SecureRandom.bytes(count)
        defer { SecureBytes.zero(&bytes) }
        self.init(bytes)
    }

    deinit {
        if let base = pointer.baseAddress, pointer.count > 0 { OPENSSL_cleanse(base, pointer.count) }
        pointer.deallocate()
    }

    /// The number of bytes (0 once erased).
    public var count: Int { lock.withLock { pointer.count } }

    /// Whether ``erase()`` has been called (or the bytes were empty).
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes; they must not escape it.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(UnsafeRawBufferPointer(pointer))
    }

    /// A plain copy of the bytes, for APIs that need an array; zero it after use with ``zero(_:)``.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    /// Overwrites the bytes with zeros and makes the buffer empty. Idempotent.
    public func erase() {
        lock.withLock {
            if let base = pointer.baseAddress, pointer.count > 0 { OPENSSL_cleanse(base, pointer.count) }
            // Keep the allocation's base so deinit frees it.
            pointer = UnsafeMutableRawBufferPointer(start: pointer.baseAddress, count: 0)
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

extension SecureBytes: Equatable {
    /// Constant-time comparison of contents.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
    }
}
