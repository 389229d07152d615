import OrchardBase

/// Why a payment token was refused, as a stable code and a human-readable reason.
///
/// Equality compares codes only (`error == PaymentTokenError(.signatureInvalid)`), so callers and
/// tests match on the category; the reason explains the particular case. Reasons never contain
/// payment data, key material or plaintext.
public struct PaymentTokenError: CodedError, Sendable {
    /// A stable, documented error code; new codes may be added.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The code's snake_case text, stable across releases.
        public var rawValue: String
        /// A code with the given text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's text.
        public var description: String { rawValue }

        /// The input is not a payment token: bad JSON, a missing or oversized field, bad base64 or hex,
        /// a signature that is not DER/BER CMS, an ephemeral public key with explicit curve parameters.
        public static let malformedToken = Code(rawValue: "malformed_token")
        /// The token's `version` is neither `EC_v1` nor `RSA_v1`.
        public static let unsupportedVersion = Code(rawValue: "unsupported_version")
        /// The CMS signature does not verify over the token's content, or its signer is not the leaf, or its
        /// digest algorithm is not SHA-256, or its signed contentType attribute differs from the eContentType.
        public static let signatureInvalid = Code(rawValue: "signature_invalid")
        /// The certificates do not form a valid chain to the trust anchor at the signing time, or lack
        /// Apple's marker extensions, or the leaf's keyUsage does not allow digitalSignature.
        public static let certificateUntrusted = Code(rawValue: "certificate_untrusted")
        /// The signing time is too old or too far in the future.
        public static let signingTimeOutOfWindow = Code(rawValue: "signing_time_out_of_window")
        /// No configured merchant key has the token's `publicKeyHash`.
        public static let unknownMerchantKey = Code(rawValue: "unknown_merchant_key")
        /// Key agreement, unwrapping or AES-GCM failed, or the plaintext is not Apple's payment data JSON.
        public static let decryptionFailed = Code(rawValue: "decryption_failed")
        /// A merchant key or certificate given to Orchard is unusable (wrong type, no merchant identifier, mismatch).
        public static let invalidMerchantKey = Code(rawValue: "invalid_merchant_key")
    }

    /// The category of the failure.
    public var code: Code
    /// What exactly went wrong (no secrets).
    public var reason: String

    /// An error with `code` and an optional `reason`.
    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// An error with `code` and an optional `reason`.
    public init(code: Code, reason: String = "") {
        self.init(code, reason)
    }
}
