// PassKitShim: the part of Apple's PassKit (and of Contacts) that OrchardPay's PassKit adapter touches, for
// platforms without PassKit (Linux), with Apple's names, signatures, raw values and availability.
//
// Import it only where PassKit is missing, so the same adapter code compiles on both:
//
//     #if canImport(PassKit)
//         import PassKit
//     #else
//         import PassKitShim
//     #endif
//
// It is a model, not a wallet. Values behave as PassKit's do (a request keeps what is set on it; an error
// carries its domain, code and userInfo as the NSError PassKit makes), but nothing here pretends to pay:
// `canMakePayments` answers false and `present` shows nothing, unless a caller describes a device
// (`PKShimDevice`) or stands in for the system's sheet (`PKPaymentAuthorizationPresenter`) — both shim-only
// names, for tests and for the layers built on OrchardPay. See docs/ios.md.

import Foundation

// MARK: Vocabulary

/// A payment network (PassKit's `PKPaymentNetwork`, a string constant).
public struct PKPaymentNetwork: RawRepresentable, Hashable, Sendable {
    /// PassKit's string.
    public let rawValue: String
    /// The network with this string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The network with this string.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// American Express.
    public static let amex = PKPaymentNetwork("AmEx")
    /// Cartes Bancaires.
    public static let cartesBancaires = PKPaymentNetwork("CartesBancaires")
    /// China UnionPay.
    public static let chinaUnionPay = PKPaymentNetwork("ChinaUnionPay")
    /// Discover.
    public static let discover = PKPaymentNetwork("Discover")
    /// eftpos.
    public static let eftpos = PKPaymentNetwork("Eftpos")
    /// Visa Electron.
    public static let electron = PKPaymentNetwork("Electron")
    /// Elo.
    public static let elo = PKPaymentNetwork("Elo")
    /// girocard.
    public static let girocard = PKPaymentNetwork("Girocard")
    /// iD.
    public static let idCredit = PKPaymentNetwork("iD")
    /// Interac.
    public static let interac = PKPaymentNetwork("Interac")
    /// JCB.
    public static let JCB = PKPaymentNetwork("JCB")
    /// mada.
    public static let mada = PKPaymentNetwork("mada")
    /// Maestro.
    public static let maestro = PKPaymentNetwork("Maestro")
    /// Mastercard.
    public static let masterCard = PKPaymentNetwork("MasterCard")
    /// Store cards.
    public static let privateLabel = PKPaymentNetwork("PrivateLabel")
    /// QUICPay.
    public static let quicPay = PKPaymentNetwork("QUICPay")
    /// Suica.
    public static let suica = PKPaymentNetwork("Suica")
    /// Visa.
    public static let visa = PKPaymentNetwork("Visa")
    /// V Pay.
    public static let vPay = PKPaymentNetwork("VPay")
}

/// The payment-processing capabilities a merchant supports (PassKit's `PKMerchantCapability`).
public struct PKMerchantCapability: OptionSet, Hashable, Sendable {
    /// PassKit's bits.
    public let rawValue: UInt
    /// The capabilities with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// 3-D Secure (`PKMerchantCapability3DS`).
    public static let threeDSecure = PKMerchantCapability(rawValue: 1 << 0)
    /// EMV (`PKMerchantCapabilityEMV`).
    public static let emv = PKMerchantCapability(rawValue: 1 << 1)
    /// Credit cards (`PKMerchantCapabilityCredit`).
    public static let credit = PKMerchantCapability(rawValue: 1 << 2)
    /// Debit cards (`PKMerchantCapabilityDebit`).
    public static let debit = PKMerchantCapability(rawValue: 1 << 3)
    /// Instant Funds Out disbursements (`PKMerchantCapabilityInstantFundsOut`).
    @available(iOS 17.0, macOS 14.0, *)
    public static let instantFundsOut = PKMerchantCapability(rawValue: 1 << 7)
    /// 3-D Secure under its name before iOS 17 (`.capability3DS`, which PassKit deprecates for ``threeDSecure``).
    public static let capability3DS = threeDSecure
    /// EMV under its name before iOS 17 (`.capabilityEMV`).
    public static let capabilityEMV = emv
    /// Credit cards under their name before iOS 17 (`.capabilityCredit`).
    public static let capabilityCredit = credit
    /// Debit cards under their name before iOS 17 (`.capabilityDebit`).
    public static let capabilityDebit = debit
}

/// The address fields a sheet collects, as PassKit named them before iOS 11 (`PKAddressField`, which PassKit
/// deprecates for ``PKContactField``); TapPay's `TPDConsumer` still takes them.
public struct PKAddressField: OptionSet, Hashable, Sendable {
    /// PassKit's bits.
    public let rawValue: UInt
    /// The fields with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The postal address (`PKAddressFieldPostalAddress`).
    public static let postalAddress = PKAddressField(rawValue: 1 << 0)
    /// The phone number (`PKAddressFieldPhone`).
    public static let phone = PKAddressField(rawValue: 1 << 1)
    /// The email address (`PKAddressFieldEmail`).
    public static let email = PKAddressField(rawValue: 1 << 2)
    /// The name (`PKAddressFieldName`).
    public static let name = PKAddressField(rawValue: 1 << 3)
    /// Every field (`PKAddressFieldAll`).
    public static let all: PKAddressField = [.postalAddress, .phone, .email, .name]
}

/// A contact field the sheet collects (PassKit's `PKContactField`, a string constant).
public struct PKContactField: RawRepresentable, Hashable, Sendable {
    /// PassKit's string.
    public let rawValue: String
    /// The field with this string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The postal address (`PKContactFieldPostalAddress`).
    public static let postalAddress = PKContactField(rawValue: "post")
    /// The email address (`PKContactFieldEmailAddress`).
    public static let emailAddress = PKContactField(rawValue: "email")
    /// The phone number (`PKContactFieldPhoneNumber`).
    public static let phoneNumber = PKContactField(rawValue: "phone")
    /// The name (`PKContactFieldName`).
    public static let name = PKContactField(rawValue: "name")
    /// The phonetic name (`PKContactFieldPhoneticName`).
    public static let phoneticName = PKContactField(rawValue: "phoneticName")
}

/// How the goods reach the customer (PassKit's `PKShippingType`).
public enum PKShippingType: UInt, Sendable {
    /// Shipped to an address.
    case shipping = 0
    /// Delivered by the merchant.
    case delivery = 1
    /// Picked up at a store.
    case storePickup = 2
    /// Picked up for a service.
    case servicePickup = 3
}

/// Whether the customer may edit the shipping contact (PassKit's `PKShippingContactEditingMode`).
@available(iOS 15.0, macOS 12.0, *)
public enum PKShippingContactEditingMode: UInt, Sendable {
    /// Editable.
    case available = 1
    /// A pickup address the customer cannot edit.
    case storePickup = 2
}

/// Whether a summary item's amount is final or pending (PassKit's `PKPaymentSummaryItemType`).
public enum PKPaymentSummaryItemType: UInt, Sendable {
    /// The amount is final.
    case final = 0
    /// The amount is not known yet.
    case pending = 1
}

/// The kind of card (PassKit's `PKPaymentMethodType`).
public enum PKPaymentMethodType: UInt, Sendable {
    /// Not known.
    case unknown = 0
    /// Debit.
    case debit = 1
    /// Credit.
    case credit = 2
    /// Prepaid.
    case prepaid = 3
    /// A store card.
    case store = 4
    /// Electronic money.
    case eMoney = 5
}

/// Whether an authorization or an update went through (PassKit's `PKPaymentAuthorizationStatus`).
public enum PKPaymentAuthorizationStatus: Int, Sendable {
    /// Accepted.
    case success = 0
    /// Refused.
    case failure = 1
}

/// The Apple Pay button's call to action (PassKit's `PKPaymentButtonType`).
public enum PKPaymentButtonType: Int, Sendable {
    /// The Apple Pay mark alone.
    case plain = 0
    /// "Buy with Apple Pay".
    case buy = 1
    /// "Set up Apple Pay".
    case setUp = 2
    /// "Pay with Apple Pay" in a store.
    case inStore = 3
    /// "Donate with Apple Pay".
    case donate = 4
    /// "Check out with Apple Pay".
    case checkout = 5
    /// "Book with Apple Pay".
    case book = 6
    /// "Subscribe with Apple Pay".
    case subscribe = 7
    /// "Reload with Apple Pay".
    case reload = 8
    /// "Add Money with Apple Pay".
    case addMoney = 9
    /// "Top Up with Apple Pay".
    case topUp = 10
    /// "Order with Apple Pay".
    case order = 11
    /// "Rent with Apple Pay".
    case rent = 12
    /// "Support with Apple Pay".
    case support = 13
    /// "Contribute with Apple Pay".
    case contribute = 14
    /// "Tip with Apple Pay".
    case tip = 15
    /// "Continue with Apple Pay".
    case `continue` = 16
}
