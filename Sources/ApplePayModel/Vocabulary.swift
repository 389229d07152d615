import Foundation

/// A string-valued vocabulary of Apple Pay that keeps values it does not know (forward compatible):
/// a newer Apple Pay version may add values; ``isKnown`` tells the ones this version knows.
public protocol OpenVocabulary: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue == String {
    /// Every value this version of Orchard knows, in documentation order.
    static var known: [Self] { get }
}

extension OpenVocabulary {
    /// Whether this version of Orchard knows the value.
    public var isKnown: Bool { Self.known.contains(self) }
    /// The raw string.
    public var description: String { rawValue }
}

/// A payment network, named as Apple Pay JS names it (`"masterCard"`); PassKit's `PKPaymentNetwork`.
///
/// Known names are recognised whatever their letter case and kept in Apple's spelling; unknown
/// names are kept as written (and reported by validation as `unsupported_network`).
public struct PaymentNetwork: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String

    /// The network with this name; known names are matched ignoring case.
    public init(rawValue: String) {
        self.rawValue = PaymentNetwork.canonical[rawValue.lowercased()] ?? rawValue
    }

    /// TapPay's upper-case spelling (`"MASTERCARD"`).
    public var tapPayName: String { rawValue.uppercased() }

    /// American Express.
    public static let amex = PaymentNetwork(rawValue: "amex")
    /// Bancomat (Italy).
    public static let bancomat = PaymentNetwork(rawValue: "bancomat")
    /// Bancontact (Belgium).
    public static let bancontact = PaymentNetwork(rawValue: "bancontact")
    /// BankAxept (Norway).
    public static let bankAxept = PaymentNetwork(rawValue: "bankAxept")
    /// Barcode payments.
    public static let barcode = PaymentNetwork(rawValue: "barcode")
    /// Cartes Bancaires (France).
    public static let cartesBancaires = PaymentNetwork(rawValue: "cartesBancaires")
    /// China UnionPay.
    public static let chinaUnionPay = PaymentNetwork(rawValue: "chinaUnionPay")
    /// Dankort (Denmark).
    public static let dankort = PaymentNetwork(rawValue: "dankort")
    /// Discover.
    public static let discover = PaymentNetwork(rawValue: "discover")
    /// eftpos (Australia).
    public static let eftpos = PaymentNetwork(rawValue: "eftpos")
    /// Visa Electron.
    public static let electron = PaymentNetwork(rawValue: "electron")
    /// Elo (Brazil).
    public static let elo = PaymentNetwork(rawValue: "elo")
    /// girocard (Germany).
    public static let girocard = PaymentNetwork(rawValue: "girocard")
    /// HimyanPay (Qatar).
    public static let himyan = PaymentNetwork(rawValue: "himyan")
    /// iD (Japan).
    public static let idCredit = PaymentNetwork(rawValue: "idCredit")
    /// Interac (Canada).
    public static let interac = PaymentNetwork(rawValue: "interac")
    /// Jaywan (United Arab Emirates).
    public static let jaywan = PaymentNetwork(rawValue: "jaywan")
    /// JCB.
    public static let jcb = PaymentNetwork(rawValue: "jcb")
    /// mada (Saudi Arabia).
    public static let mada = PaymentNetwork(rawValue: "mada")
    /// Maestro.
    public static let maestro = PaymentNetwork(rawValue: "maestro")
    /// Mastercard.
    public static let masterCard = PaymentNetwork(rawValue: "masterCard")
    /// Meeza (Egypt).
    public static let meeza = PaymentNetwork(rawValue: "meeza")
    /// Mir (Russia).
    public static let mir = PaymentNetwork(rawValue: "mir")
    /// nanaco (Japan).
    public static let nanaco = PaymentNetwork(rawValue: "nanaco")
    /// NAPAS (Vietnam).
    public static let napas = PaymentNetwork(rawValue: "napas")
    /// PagoBancomat (Italy).
    public static let pagoBancomat = PaymentNetwork(rawValue: "pagoBancomat")
    /// PostFinance (Switzerland).
    public static let postFinance = PaymentNetwork(rawValue: "postFinance")
    /// Store-issued private label cards.
    public static let privateLabel = PaymentNetwork(rawValue: "privateLabel")
    /// QUICPay (Japan).
    public static let quicPay = PaymentNetwork(rawValue: "quicPay")
    /// Suica (Japan).
    public static let suica = PaymentNetwork(rawValue: "suica")
    /// T-money (South Korea).
    public static let tmoney = PaymentNetwork(rawValue: "tmoney")
    /// Visa.
    public static let visa = PaymentNetwork(rawValue: "visa")
    /// V Pay.
    public static let vPay = PaymentNetwork(rawValue: "vPay")
    /// WAON (Japan).
    public static let waon = PaymentNetwork(rawValue: "waon")

    /// Every network Apple Pay documents, in Apple's order.
    public static let known: [PaymentNetwork] = knownNames.map { PaymentNetwork(rawValue: $0) }

    private static let knownNames = [
        "amex", "bancomat", "bancontact", "bankAxept", "barcode", "cartesBancaires", "chinaUnionPay", "dankort",
        "discover", "eftpos", "electron", "elo", "girocard", "himyan", "idCredit", "interac", "jaywan", "jcb",
        "mada", "maestro", "masterCard", "meeza", "mir", "nanaco", "napas", "pagoBancomat", "postFinance",
        "privateLabel", "quicPay", "suica", "tmoney", "visa", "vPay", "waon",
    ]
    private static let canonical: [String: String] = Dictionary(
        uniqueKeysWithValues: knownNames.map { ($0.lowercased(), $0) })
}

/// What the merchant's payment processor supports (`merchantCapabilities`); `supports3DS` is required.
public struct MerchantCapability: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// 3-D Secure; required.
    public static let supports3DS = MerchantCapability(rawValue: "supports3DS")
    /// EMV (China UnionPay).
    public static let supportsEMV = MerchantCapability(rawValue: "supportsEMV")
    /// Credit cards.
    public static let supportsCredit = MerchantCapability(rawValue: "supportsCredit")
    /// Debit cards.
    public static let supportsDebit = MerchantCapability(rawValue: "supportsDebit")
    /// Instant funds out (card disbursements).
    public static let supportsInstantFundsOut = MerchantCapability(rawValue: "supportsInstantFundsOut")
    /// Every capability Apple Pay documents.
    public static let known: [MerchantCapability] = [
        .supports3DS, .supportsEMV, .supportsCredit, .supportsDebit, .supportsInstantFundsOut,
    ]
}

/// A contact field the sheet must collect (`requiredBillingContactFields`, `requiredShippingContactFields`).
public struct ContactField: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An email address.
    public static let email = ContactField(rawValue: "email")
    /// A name.
    public static let name = ContactField(rawValue: "name")
    /// A phone number.
    public static let phone = ContactField(rawValue: "phone")
    /// A postal address.
    public static let postalAddress = ContactField(rawValue: "postalAddress")
    /// A phonetic name.
    public static let phoneticName = ContactField(rawValue: "phoneticName")
    /// Every field Apple Pay documents.
    public static let known: [ContactField] = [.email, .name, .phone, .postalAddress, .phoneticName]
}

/// How the goods reach the customer (`shippingType`).
public struct ShippingType: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Shipped to an address (the default).
    public static let shipping = ShippingType(rawValue: "shipping")
    /// Delivered by the merchant.
    public static let delivery = ShippingType(rawValue: "delivery")
    /// Picked up at a store.
    public static let storePickup = ShippingType(rawValue: "storePickup")
    /// Picked up for a service (e.g. a car for repair).
    public static let servicePickup = ShippingType(rawValue: "servicePickup")
    /// Every shipping type Apple Pay documents.
    public static let known: [ShippingType] = [.shipping, .delivery, .storePickup, .servicePickup]
}

/// Whether the customer may edit the shipping contact (`shippingContactEditingMode`).
public struct ShippingContactEditingMode: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Editable.
    public static let available = ShippingContactEditingMode(rawValue: "available")
    /// Not editable: a store pickup address.
    public static let storePickup = ShippingContactEditingMode(rawValue: "storePickup")
    /// Every mode Apple Pay documents.
    public static let known: [ShippingContactEditingMode] = [.available, .storePickup]
}

/// When a summary item is charged (`paymentTiming`).
public struct PaymentTiming: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Now (the default).
    public static let immediate = PaymentTiming(rawValue: "immediate")
    /// On a schedule.
    public static let recurring = PaymentTiming(rawValue: "recurring")
    /// Later, on a date.
    public static let deferred = PaymentTiming(rawValue: "deferred")
    /// When a balance falls below a threshold.
    public static let automaticReload = PaymentTiming(rawValue: "automaticReload")
    /// Every timing Apple Pay documents.
    public static let known: [PaymentTiming] = [.immediate, .recurring, .deferred, .automaticReload]
}

/// The calendar unit of a recurring payment's interval.
public struct RecurringIntervalUnit: OpenVocabulary {
    /// Apple Pay JS's name.
    public let rawValue: String
    /// Wraps a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Years.
    public static let year = RecurringIntervalUnit(rawValue: "year")
    /// Months.
    public static let month = RecurringIntervalUnit(rawValue: "month")
    /// Days.
    public static let day = RecurringIntervalUnit(rawValue: "day")
    /// Hours.
    public static let hour = RecurringIntervalUnit(rawValue: "hour")
    /// Minutes.
    public static let minute = RecurringIntervalUnit(rawValue: "minute")
    /// Every unit Apple Pay documents.
    public static let known: [RecurringIntervalUnit] = [.year, .month, .day, .hour, .minute]
}
