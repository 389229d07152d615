/// A card of the sandbox: the device account number minted into its tokens, the `paymentMethod` network and
/// type, and the BIN table row the sandbox merchant gets for it (so `card_info` is complete).
///
/// This is the one list of test cards: the sandbox wallet route (`POST /v1/sandbox/wallet/tokens`), the
/// browser sheet's card chooser, `orchard sandbox mint`, the sandbox merchant's BIN table and the sandbox
/// acquirer's declined account numbers all read it.
public struct SandboxTestCard: Sendable, Hashable, Identifiable {
    /// The wallet route's `card` value (`visa_credit` …).
    public let id: String
    /// What the sheet shows (`Visa credit` …).
    public let label: String
    /// The device account number (a test DPAN; never a real card).
    public let pan: String
    /// Apple Pay's `paymentMethod.network` (`Visa`, `MasterCard`, `JCB`, `AmEx`).
    public let network: String
    /// Apple Pay's `paymentMethod.type` (`credit`, `debit`).
    public let type: String
    /// The BIN table prefix of the card (6 or 8 digits).
    public let binPrefix: String
    /// The issuer, in English.
    public let issuer: String
    /// The issuer, in Traditional Chinese.
    public let issuerZhTW: String
    /// The issuing bank's code.
    public let bankID: String
    /// The card level (`CLASSIC`, `PLATINUM` …).
    public let level: String
    /// The issuing country's name.
    public let country: String
    /// The issuing country, ISO 3166-1 alpha-2.
    public let countryCode: String

    /// The default card: a Visa credit test DPAN (BIN 476112, last four 0492) that the acquirer approves.
    public static let visaCredit = SandboxTestCard(
        id: "visa_credit", label: "Visa credit", pan: "4761120010000492", network: "Visa", type: "credit",
        binPrefix: "476112", issuer: "Sandbox Bank", issuerZhTW: "沙盒銀行", bankID: "999", level: "CLASSIC")
    /// A Visa debit card.
    public static let visaDebit = SandboxTestCard(
        id: "visa_debit", label: "Visa debit", pan: "4147090000000015", network: "Visa", type: "debit",
        binPrefix: "414709", issuer: "Sandbox Bank", issuerZhTW: "沙盒銀行", bankID: "999", level: "CLASSIC")
    /// A Mastercard credit card.
    public static let mastercard = SandboxTestCard(
        id: "mastercard", label: "Mastercard", pan: "5204740000000012", network: "MasterCard", type: "credit",
        binPrefix: "520474", issuer: "Sandbox Bank", issuerZhTW: "沙盒銀行", bankID: "999", level: "PLATINUM")
    /// A JCB credit card.
    public static let jcb = SandboxTestCard(
        id: "jcb", label: "JCB", pan: "3569990000000017", network: "JCB", type: "credit", binPrefix: "356999",
        issuer: "Sandbox Bank", issuerZhTW: "沙盒銀行", bankID: "999", level: "GOLD")
    /// An American Express card (15 digits).
    public static let amex = SandboxTestCard(
        id: "amex", label: "Amex", pan: "371449635398431", network: "AmEx", type: "credit", binPrefix: "371449",
        issuer: "Sandbox Express", issuerZhTW: "沙盒運通", bankID: "998", level: "GREEN")
    /// A Visa card the sandbox acquirer always declines (`do_not_honor`).
    public static let declined = SandboxTestCard(
        id: "declined", label: "Declined card", pan: "4000000000000002", network: "Visa", type: "credit",
        binPrefix: "40000000", issuer: "Sandbox Decline Bank", issuerZhTW: "沙盒拒絕銀行", bankID: "997",
        level: "CLASSIC")

    /// Every test card, in the sheet's order.
    public static let all: [SandboxTestCard] = [visaCredit, visaDebit, mastercard, jcb, amex, declined]

    /// The card whose ``id`` is `id`, or nil.
    public static func named(_ id: String) -> SandboxTestCard? { all.first { $0.id == id } }

    init(
        id: String, label: String, pan: String, network: String, type: String, binPrefix: String, issuer: String,
        issuerZhTW: String, bankID: String, level: String, country: String = "TAIWAN", countryCode: String = "TW"
    ) {
        self.id = id
        self.label = label
        self.pan = pan
        self.network = network
        self.type = type
        self.binPrefix = binPrefix
        self.issuer = issuer
        self.issuerZhTW = issuerZhTW
        self.bankID = bankID
        self.level = level
        self.country = country
        self.countryCode = countryCode
    }
}
