import COpenSSL

/// An error from a cryptographic primitive, with a stable code and the OpenSSL reason when there is one.
///
/// Equality compares codes only, so callers can match `error == CryptoError(code: .authenticationFailed)`.
/// Descriptions never contain key material or plaintext.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, documented error code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// An AEAD tag or MAC did not verify.
        public static let authenticationFailed = Code(rawValue: "authentication_failed")
        /// A key, nonce or input has the wrong size or form.
        public static let invalidInput = Code(rawValue: "invalid_input")
        /// OpenSSL reported a failure (reason holds its error queue).
        public static let openSSLFailure = Code(rawValue: "openssl_failure")
        /// The random generator failed.
        public static let randomFailure = Code(rawValue: "random_failure")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human-readable reason (no secrets).
    public var reason: String

    public init(code: Code, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason.isEmpty ? code.rawValue : "\(code.rawValue): \(reason)" }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// An `openssl_failure` whose reason is `what` followed by the drained OpenSSL error queue.
    public static func openSSL(_ what: String) -> CryptoError {
        CryptoError(code: .openSSLFailure, reason: "\(what): \(OpenSSLErrorQueue.drain())")
    }
}

/// The calling thread's OpenSSL error queue.
public enum OpenSSLErrorQueue {
    /// Empties the queue and returns its entries as text ("unknown" when it was empty).
    public static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "unknown" : messages.joined(separator: "; ")
    }

    /// Empties the queue, discarding its entries.
    public static func clear() { ERR_clear_error() }
}
