import Foundation
import OrchardBase

/// The three JSON shapes of a payment request.
public enum PaymentRequestFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Apple Pay JS's `ApplePayPaymentRequest`, what `new ApplePaySession(version, request)` takes.
    case applePayJS = "applepay-js"
    /// The W3C Payment Request form: `{"methodData": [{"supportedMethods": "https://apple.com/apple-pay",
    /// "data": {…}}], "details": {…}, "options": {…}}`, the arguments of `new PaymentRequest(…)`.
    case w3c
    /// TapPay's web SDK `paymentRequest` object (`TPDirect.paymentRequestApi.setupPaymentRequest`).
    case tapPayWeb = "tappay-web"

    /// The raw name (`applepay-js`).
    public var description: String { rawValue }
}

/// One problem found in a payment request: a stable code, a message and the JSON path of the field.
public struct ValidationIssue: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The stable code (`total_mismatch`, `88013` …), listed in docs/payment-request.md.
    public var code: String
    /// A human readable explanation.
    public var message: String
    /// Where: a JSON path such as `$.lineItems[1].amount`, or `setupApplePay.merchantIdentifier`
    /// for a value that comes from outside the request.
    public var path: String

    /// Creates an issue.
    public init(code: String, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// `path: code: message`.
    public var description: String { "\(path): \(code): \(message)" }
}

/// Input that is not a payment request at all: not JSON, or no recognisable shape.
public struct PaymentRequestInputError: CodedError {
    /// A stable code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The code string.
        public var rawValue: String
        /// Wraps a code string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code string.
        public var description: String { rawValue }
        /// The input is not JSON.
        public static let invalidJSON = Code(rawValue: "invalid_json")
        /// The input is JSON but not an object of one of the three shapes.
        public static let unknownShape = Code(rawValue: "unknown_shape")
        /// The input is larger or deeper than allowed.
        public static let inputTooLarge = Code(rawValue: "input_too_large")
    }
    /// What went wrong.
    public var code: Code
    /// Why.
    public var reason: String
    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
    /// `code: reason`.
    public var description: String { "\(code.rawValue): \(reason)" }
}
