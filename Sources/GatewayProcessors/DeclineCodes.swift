/// Orchard's decline codes, and each processor's codes mapped to them: one table per processor, here and in
/// docs/processors.md. A code a table does not have is `do_not_honor`; the processor's own code is kept on the
/// payment as `processor_code` either way.
public enum DeclineCodes {
    /// The issuer declined without a more precise reason (also every code a table does not know).
    public static let doNotHonor = "do_not_honor"
    public static let insufficientFunds = "insufficient_funds"
    public static let expiredCard = "expired_card"
    /// The account number, the account or the card's data is not valid.
    public static let invalidCard = "invalid_card"
    /// The issuer, the acquirer or the processor's risk checks suspect fraud.
    public static let fraudSuspected = "fraud_suspected"
    /// A temporary failure (the issuer unavailable, a timeout at the network): the same card may succeed later.
    public static let tryAgain = "try_again"
    /// The card is blocked, restricted, lost or stolen.
    public static let restrictedCard = "restricted_card"
    /// The card or the issuer does not take this kind of transaction (or currency).
    public static let cardNotSupported = "card_not_supported"
    /// The amount is refused (over the authorized amount, malformed).
    public static let invalidAmount = "invalid_amount"
    /// An amount or count limit of the card is reached.
    public static let limitExceeded = "limit_exceeded"
    /// The issuer wants the cardholder authenticated (or the authentication failed).
    public static let authenticationRequired = "authentication_required"
    /// The token's cryptogram (the card's dynamic security code) was refused.
    public static let invalidCryptogram = "invalid_cryptogram"
    /// The acquirer or processor could not process the request as sent.
    public static let processingError = "processing_error"

    /// Adyen's `refusalReasonCode` (docs.adyen.com "Refusal reasons"; the text is its `refusalReason`, which a
    /// notification's `reason` carries) and Orchard's code for it.
    public static let adyen: [String: (reason: String, code: String)] = [
        "2": ("Refused", doNotHonor),
        "3": ("Referral", doNotHonor),
        "4": ("Acquirer Error", processingError),
        "5": ("Blocked Card", restrictedCard),
        "6": ("Expired Card", expiredCard),
        "7": ("Invalid Amount", invalidAmount),
        "8": ("Invalid Card Number", invalidCard),
        "9": ("Issuer Unavailable", tryAgain),
        "10": ("Not supported", cardNotSupported),
        "11": ("3D Not Authenticated", authenticationRequired),
        "12": ("Not enough balance", insufficientFunds),
        "14": ("Acquirer Fraud", fraudSuspected),
        "15": ("Cancelled", doNotHonor),
        "16": ("Shopper Cancelled", doNotHonor),
        "17": ("Invalid Pin", doNotHonor),
        "18": ("Pin tries exceeded", restrictedCard),
        "19": ("Pin validation not possible", doNotHonor),
        "20": ("FRAUD", fraudSuspected),
        "21": ("Not Submitted", processingError),
        "22": ("FRAUD-CANCELLED", fraudSuspected),
        "23": ("Transaction Not Permitted", cardNotSupported),
        "24": ("CVC Declined", invalidCryptogram),
        "25": ("Restricted Card", restrictedCard),
        "26": ("Revocation Of Auth", doNotHonor),
        "27": ("Declined Non Generic", doNotHonor),
        "28": ("Withdrawal amount exceeded", limitExceeded),
        "29": ("Withdrawal count exceeded", limitExceeded),
        "31": ("Issuer Suspected Fraud", fraudSuspected),
        "32": ("AVS Declined", doNotHonor),
        "33": ("Card requires online pin", doNotHonor),
        "34": ("No checking account available on Card", invalidCard),
        "35": ("No savings account available on Card", invalidCard),
        "36": ("Mobile pin required", doNotHonor),
        "37": ("Contactless fallback", tryAgain),
        "38": ("Authentication required", authenticationRequired),
        "39": ("RReq not received from DS", authenticationRequired),
        "40": ("Current AID is in Penalty Box.", doNotHonor),
        "41": ("CVM Required Restart Payment", tryAgain),
        "42": ("3DS Authentication Error", authenticationRequired),
        "46": ("Transaction blocked by Adyen to prevent excessive retry fees", doNotHonor),
    ]

    /// Checkout.com's `response_code` of a declined payment (checkout.com "API response codes": 20xxx soft
    /// declines, 30xxx hard declines, 4xxxx risk) and Orchard's code for it.
    public static let checkoutCom: [String: String] = [
        "20001": doNotHonor, "20002": doNotHonor, "20003": processingError, "20004": restrictedCard,
        "20005": doNotHonor, "20006": processingError, "20009": tryAgain, "20012": cardNotSupported,
        "20013": invalidAmount, "20014": invalidCard, "20015": cardNotSupported, "20017": doNotHonor,
        "20019": tryAgain, "20021": doNotHonor, "20022": tryAgain, "20030": processingError,
        "20031": cardNotSupported, "20038": restrictedCard, "20039": invalidCard, "20046": doNotHonor,
        "20051": insufficientFunds, "20052": invalidCard, "20053": invalidCard, "20054": expiredCard,
        "20055": doNotHonor, "20056": invalidCard, "20057": cardNotSupported, "20058": cardNotSupported,
        "20059": fraudSuspected, "20061": limitExceeded, "20062": restrictedCard, "20063": fraudSuspected,
        "20065": limitExceeded, "20068": tryAgain, "20075": restrictedCard, "20078": restrictedCard,
        "20082": invalidCryptogram, "20087": invalidCard, "20091": tryAgain, "20092": tryAgain,
        "20093": cardNotSupported, "20096": tryAgain, "20099": doNotHonor, "20100": invalidCard,
        "20101": invalidCard, "20103": cardNotSupported, "20106": cardNotSupported, "20114": invalidCard,
        "20150": authenticationRequired, "20151": authenticationRequired, "20154": authenticationRequired,
        "200N7": invalidCryptogram, "200P1": limitExceeded, "200P9": limitExceeded, "200R1": doNotHonor,
        "200R3": doNotHonor, "200T3": cardNotSupported, "2005C": cardNotSupported,
        "30004": restrictedCard, "30007": restrictedCard, "30015": invalidCard, "30020": invalidAmount,
        "30021": limitExceeded, "30022": limitExceeded, "30033": expiredCard, "30034": fraudSuspected,
        "30036": restrictedCard, "30038": restrictedCard, "30041": restrictedCard, "30043": restrictedCard,
        "30046": invalidCard,
        "40101": fraudSuspected, "40201": fraudSuspected, "40202": fraudSuspected, "40203": fraudSuspected,
        "40204": fraudSuspected, "40205": fraudSuspected, "41101": fraudSuspected, "42101": fraudSuspected,
        "41201": fraudSuspected, "41202": fraudSuspected, "41203": fraudSuspected, "41204": fraudSuspected,
        "41205": fraudSuspected, "41206": fraudSuspected, "42201": fraudSuspected, "42202": fraudSuspected,
        "42203": fraudSuspected, "42204": fraudSuspected, "42205": fraudSuspected, "42206": fraudSuspected,
        "41301": fraudSuspected, "42301": fraudSuspected, "43301": fraudSuspected, "43101": fraudSuspected,
        "43102": fraudSuspected, "43201": fraudSuspected, "43202": fraudSuspected, "43203": fraudSuspected,
        "43204": fraudSuspected, "43205": fraudSuspected, "43206": fraudSuspected, "44301": authenticationRequired,
    ]

    /// Orchard's code for Adyen's `refusalReasonCode`, else for its `refusalReason` text (a notification's
    /// `reason`); `do_not_honor` for one the table does not have.
    public static func adyenCode(code: String?, reason: String?) -> String {
        if let code, let entry = adyen[code] { return entry.code }
        guard let reason = reason?.lowercased() else { return doNotHonor }
        // The longest reason the text starts with (a reason may carry detail after it: "Refused: …").
        let entry = adyen.values.filter { reason.hasPrefix($0.reason.lowercased()) }.max {
            $0.reason.count < $1.reason.count
        }
        return entry?.code ?? doNotHonor
    }

    /// Orchard's code for Checkout.com's `response_code`; `do_not_honor` for one the table does not have.
    public static func checkoutComCode(_ code: String?) -> String {
        code.flatMap { checkoutCom[$0] } ?? doNotHonor
    }
}
