// The errors a merchant shows on the sheet (PassKit's PKPaymentError and PKPaymentRequest's factories): each is
// the NSError PassKit makes, with its domain, code and userInfo (`PKPaymentErrorKey`s and
// `NSLocalizedDescriptionKey`).

import Foundation

/// The domain of the sheet's errors (`PKPaymentErrorDomain`).
public let PKPaymentErrorDomain = "PKPaymentErrorDomain"

/// The userInfo keys of a sheet error (PassKit's `PKPaymentErrorKey`).
public struct PKPaymentErrorKey: RawRepresentable, Hashable, Sendable {
    /// The key's string.
    public let rawValue: String
    /// The key with this string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The contact field at fault: a `PKContactField`'s string (`PKPaymentErrorContactFieldUserInfoKey`).
    public static let contactFieldUserInfoKey = PKPaymentErrorKey(rawValue: "PKPaymentErrorContactField")
    /// The postal address key at fault: a `CNPostalAddress…Key` (`PKPaymentErrorPostalAddressUserInfoKey`).
    public static let postalAddressUserInfoKey = PKPaymentErrorKey(rawValue: "PKPaymentErrorPostalAddress")
}

/// An error shown next to a field of the sheet (PassKit's `PKPaymentError`): an `NSError` of
/// ``PKPaymentErrorDomain``.
public struct PKPaymentError: CustomNSError, Hashable, @unchecked Sendable {
    /// What the error concerns (PassKit's `PKPaymentError.Code`).
    public enum Code: Int, Hashable, Sendable {
        /// Something else (`PKPaymentUnknownError`).
        case unknownError = -1
        /// A shipping contact field (`PKPaymentShippingContactInvalidError`).
        case shippingContactInvalidError = 1
        /// A billing contact field (`PKPaymentBillingContactInvalidError`).
        case billingContactInvalidError = 2
        /// The shipping address cannot be served (`PKPaymentShippingAddressUnserviceableError`).
        case shippingAddressUnserviceableError = 3
        /// The coupon code is not valid (`PKPaymentCouponCodeInvalidError`).
        @available(iOS 15.0, macOS 12.0, *)
        case couponCodeInvalidError = 4
        /// The coupon code has expired (`PKPaymentCouponCodeExpiredError`).
        @available(iOS 15.0, macOS 12.0, *)
        case couponCodeExpiredError = 5
    }

    /// The error as Foundation holds it.
    public let _nsError: NSError

    /// An error of `code` with `userInfo` (`NSLocalizedDescriptionKey` and the `PKPaymentErrorKey` strings).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        _nsError = NSError(domain: PKPaymentErrorDomain, code: code.rawValue, userInfo: userInfo)
    }

    /// ``PKPaymentErrorDomain``.
    public static var errorDomain: String { PKPaymentErrorDomain }
    /// The code.
    public var code: Code { Code(rawValue: _nsError.code) ?? .unknownError }
    /// The code's number.
    public var errorCode: Int { _nsError.code }
    /// The user info.
    public var userInfo: [String: Any] { _nsError.userInfo }
    /// The user info.
    public var errorUserInfo: [String: Any] { _nsError.userInfo }

    /// `PKPaymentError.Code.unknownError`.
    public static var unknownError: Code { .unknownError }
    /// `PKPaymentError.Code.shippingContactInvalidError`.
    public static var shippingContactInvalidError: Code { .shippingContactInvalidError }
    /// `PKPaymentError.Code.billingContactInvalidError`.
    public static var billingContactInvalidError: Code { .billingContactInvalidError }
    /// `PKPaymentError.Code.shippingAddressUnserviceableError`.
    public static var shippingAddressUnserviceableError: Code { .shippingAddressUnserviceableError }
    /// `PKPaymentError.Code.couponCodeInvalidError`.
    @available(iOS 15.0, macOS 12.0, *)
    public static var couponCodeInvalidError: Code { .couponCodeInvalidError }
    /// `PKPaymentError.Code.couponCodeExpiredError`.
    @available(iOS 15.0, macOS 12.0, *)
    public static var couponCodeExpiredError: Code { .couponCodeExpiredError }

    /// Equal when domain, code and user info are (NSError's equality).
    public static func == (lhs: PKPaymentError, rhs: PKPaymentError) -> Bool { lhs._nsError.isEqual(rhs._nsError) }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(_nsError.code) }
}

extension PKPaymentRequest {
    /// A sheet error's user info: the description (when given) and the PassKit keys.
    static func userInfo(
        _ description: String?, field: PKContactField? = nil, postalAddressKey: String? = nil
    ) -> [String: Any] {
        var info: [String: Any] = [:]
        if let description { info[NSLocalizedDescriptionKey] = description }
        if let field { info[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] = field.rawValue }
        if let postalAddressKey { info[PKPaymentErrorKey.postalAddressUserInfoKey.rawValue] = postalAddressKey }
        return info
    }

    /// A shipping contact error on `field` (`shippingContactInvalidError`); the sheet highlights the field.
    public class func paymentContactInvalidError(
        withContactField field: PKContactField, localizedDescription: String?
    ) -> any Error {
        PKPaymentError(.shippingContactInvalidError, userInfo: userInfo(localizedDescription, field: field))
    }

    /// A shipping address error on the `CNPostalAddress…Key` `postalAddressKey` (`shippingContactInvalidError`,
    /// contact field `postalAddress`).
    public class func paymentShippingAddressInvalidError(
        withKey postalAddressKey: String, localizedDescription: String?
    ) -> any Error {
        PKPaymentError(
            .shippingContactInvalidError,
            userInfo: userInfo(localizedDescription, field: .postalAddress, postalAddressKey: postalAddressKey))
    }

    /// A billing address error on `postalAddressKey` (`billingContactInvalidError`, contact field
    /// `postalAddress`).
    public class func paymentBillingAddressInvalidError(
        withKey postalAddressKey: String, localizedDescription: String?
    ) -> any Error {
        PKPaymentError(
            .billingContactInvalidError,
            userInfo: userInfo(localizedDescription, field: .postalAddress, postalAddressKey: postalAddressKey))
    }

    /// The merchant cannot serve the shipping address (`shippingAddressUnserviceableError`).
    public class func paymentShippingAddressUnserviceableError(withLocalizedDescription description: String?)
        -> any Error
    {
        PKPaymentError(.shippingAddressUnserviceableError, userInfo: userInfo(description))
    }

    /// The coupon code is not valid (`couponCodeInvalidError`).
    @available(iOS 15.0, macOS 12.0, *)
    public static func paymentCouponCodeInvalidError(localizedDescription: String?) -> any Error {
        PKPaymentError(.couponCodeInvalidError, userInfo: userInfo(localizedDescription))
    }

    /// The coupon code has expired (`couponCodeExpiredError`).
    @available(iOS 15.0, macOS 12.0, *)
    public static func paymentCouponCodeExpiredError(localizedDescription: String?) -> any Error {
        PKPaymentError(.couponCodeExpiredError, userInfo: userInfo(localizedDescription))
    }
}
