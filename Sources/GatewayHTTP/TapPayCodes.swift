import Foundation
import Gateway

/// TapPay's published `status` codes that the `/tpc/…` routes answer, with TapPay's `msg` (docs/migrating.md
/// lists them with the Orchard codes they stand for).
enum TapPayStatus: Int, Sendable {
    case endOfList = 2
    case wrongJSON = 5
    case merchantNotFound = 61
    case refundCancelNotSupported = 68
    case instalmentNotSupported = 71
    case invalidAPIKey = 80
    case partnerNotFound = 81
    case partnerKeyMismatch = 82
    case partnerUnauthorized = 84
    case currencyNotSupported = 89
    case expiredPrime = 91
    case invalidPrime = 121
    case merchantGroupNotFound = 130
    case missingMerchantID = 502
    case missingPrime = 503
    case missingPartnerKey = 506
    case invalidAmount = 510
    case invalidCaptureDelay = 512
    case captureDelayOutOfRange = 514
    case detailsOutOfRange = 515
    case phoneNumberOutOfRange = 519
    case nameOutOfRange = 520
    case emailOutOfRange = 521
    case addressOutOfRange = 522
    case zipCodeOutOfRange = 523
    case nationalIDOutOfRange = 524
    case invalidRecordsPerPage = 535
    case invalidPage = 536
    case invalidStartTime = 537
    case invalidEndTime = 538
    case invalidRecTradeIDFilter = 539
    case invalidUpperLimit = 545
    case invalidLowerLimit = 546
    case invalidMerchantIDFilter = 548
    case invalidRecordStatus = 549
    case invalidOrderByAttribute = 550
    case invalidOrderByDescending = 551
    case recordsPerPageOutOfRange = 559
    case pageOutOfRange = 560
    case startAfterEnd = 563
    case lowerAboveUpper = 566
    case orderNumberOutOfRange = 568
    case bankTransactionIDOutOfRange = 569
    case missingRecTradeID = 596
    case invalidCurrency = 652
    case invalidRefundID = 670
    case inconsistentAmount = 909
    case inconsistentCurrency = 910
    case systemError = 915
    case capCancelCaptured = 934
    case capCancelNotArranged = 935
    case capCancelCapturing = 936
    case repeatedRequest = 2003
    case invalidRecTradeID = 4002
    case repeatedRefund = 4014
    case duplicateBankTransactionID = 6001
    case transactionPending = 10001
    case cardDeclined = 10003
    case bankTimeout = 10004
    case refundPendingCapture = 10010
    case refundError = 10011
    case bankError = 10023
    case authorizedPartialRefund = 10024
    case cardTypeNotSupported = 10039
    case amountOutOfRange = 10050
    case refundAmountOutOfRange = 10051

    /// TapPay's message for the code.
    var msg: String {
        switch self {
        case .endOfList: "End of list"
        case .wrongJSON: "Wrong JSON format"
        case .merchantNotFound: "Merchant not found or removed"
        case .refundCancelNotSupported: "This merchant does not support refund cancel"
        case .instalmentNotSupported: "This merchant does not support instalment"
        case .invalidAPIKey: "Invaild x-api-key or app key"
        case .partnerNotFound: "Partner not found"
        case .partnerKeyMismatch: "Partner key mismatch"
        case .partnerUnauthorized: "Partner unauthorized"
        case .currencyNotSupported: "This merchant does not support this currency"
        case .expiredPrime: "Expired prime"
        case .invalidPrime: "Invalid arguments : prime"
        case .merchantGroupNotFound: "Merchant group not found"
        case .missingMerchantID: "Missing arguments : merchant_id"
        case .missingPrime: "Missing arguments : prime"
        case .missingPartnerKey: "Missing arguments : partner_key"
        case .invalidAmount: "Invalid arguments : amount"
        case .invalidCaptureDelay: "Invalid arguments : delay_capture_in_days"
        case .captureDelayOutOfRange: "Out of range : delay_capture_in_days"
        case .detailsOutOfRange: "Out of range : details"
        case .phoneNumberOutOfRange: "Out of range : cardholder > phone_number"
        case .nameOutOfRange: "Out of range : cardholder > name"
        case .emailOutOfRange: "Out of range : cardholder > email"
        case .addressOutOfRange: "Out of range : cardholder > address"
        case .zipCodeOutOfRange: "Out of range : cardholder > zip_code"
        case .nationalIDOutOfRange: "Out of range : cardholder > national_id"
        case .invalidRecordsPerPage: "Invalid arguments : records_per_page"
        case .invalidPage: "Invalid arguments : page"
        case .invalidStartTime: "Invalid arguments : filters > time > start_time"
        case .invalidEndTime: "Invalid arguments : filters > time > end_time"
        case .invalidRecTradeIDFilter: "Invalid arguments : filters > rec_trade_id"
        case .invalidUpperLimit: "Invalid arguments : filters > amount > upper_limit"
        case .invalidLowerLimit: "Invalid arguments : filters > amount > lower_limit"
        case .invalidMerchantIDFilter: "Invalid arguments : filters > merchant_id"
        case .invalidRecordStatus: "Invalid arguments : filters > record_status"
        case .invalidOrderByAttribute: "Invalid arguments : order_by > attribute"
        case .invalidOrderByDescending: "Invalid arguments : order_by > is_descending"
        case .recordsPerPageOutOfRange: "Out of range : records_per_page"
        case .pageOutOfRange: "Out of range : page"
        case .startAfterEnd: "filters > time > start_time can't be more than the end_time"
        case .lowerAboveUpper: "filters > amount > lower_limit can't be more than the upper_limit"
        case .orderNumberOutOfRange: "Out of range : order_number"
        case .bankTransactionIDOutOfRange: "Out of range : bank_transaction_id"
        case .missingRecTradeID: "Missing arguments : rec_trade_id"
        case .invalidCurrency: "Invalid arguments : currency"
        case .invalidRefundID: "Invalid arguments : refund_id"
        case .inconsistentAmount: "Inconsistent amount"
        case .inconsistentCurrency: "Inconsistent currency"
        case .systemError: "System Error"
        case .capCancelCaptured: "Incorrect status [Transaction has been Captured,could not be canceled]"
        case .capCancelNotArranged: "Incorrect status [Transaction does not arrange capture,could not be canceled]"
        case .capCancelCapturing: "Incorrect status [Transaction is capturing,could not be canceled]"
        case .repeatedRequest: "Repeated request"
        case .invalidRecTradeID: "Invalid rectradeid"
        case .repeatedRefund: "Repeated refund"
        case .duplicateBankTransactionID: "Duplicate bank_transaction_id"
        case .transactionPending: "Transaction Pending"
        case .cardDeclined: "Card error, please ask for issuer"
        case .bankTimeout: "Bank Timeout"
        case .refundPendingCapture: "Transaction pending capture, can not refund"
        case .refundError: "Refund error. Please try again."
        case .bankError: "Bank Error"
        case .authorizedPartialRefund: "Authorized transaction cannot be partially refunded"
        case .cardTypeNotSupported: "This merchant does not support this card type"
        case .amountOutOfRange: "Amount out of range"
        case .refundAmountOutOfRange: "Refund amount out of range"
        }
    }
}

/// A TapPay-shaped refusal: HTTP 200 with `status`, `msg` and Orchard's stable `orchard_code`. Its body holds
/// only JSON values (strings, numbers, arrays and objects of them), built before it is thrown and never changed
/// after, so sharing it is safe.
struct TapPayRefusal: Error, @unchecked Sendable {
    var body: [String: Any]

    init(body: [String: Any]) { self.body = body }

    init(_ status: TapPayStatus, orchardCode: String? = nil, msg: String? = nil, bankResultCode: String? = nil) {
        body = ["status": status.rawValue, "msg": msg ?? status.msg]
        if let orchardCode { body["orchard_code"] = orchardCode }
        if let bankResultCode { body["bank_result_code"] = bankResultCode }
    }

    /// The TapPay status for a domain error (``table``, then the parameter-specific codes).
    init(_ error: GatewayError) {
        let code = error.code.rawValue
        let status = Self.table[error.code] ?? error.param.flatMap { Self.parameters[$0] } ?? .systemError
        self.init(
            status, orchardCode: code, msg: status == .systemError ? "System Error: \(code)" : nil,
            bankResultCode: error.declineCode)
    }

    /// Domain codes with one TapPay status wherever they arise.
    static let table: [GatewayError.Code: TapPayStatus] = [
        .primeNotFound: .invalidPrime, .primeAlreadyUsed: .invalidPrime, .primeNotDeferred: .invalidPrime,
        .primeExpired: .expiredPrime, .amountMismatch: .inconsistentAmount,
        .currencyMismatch: .inconsistentCurrency, .currencyNotSupported: .currencyNotSupported,
        .unknownCurrency: .invalidCurrency, .invalidAmount: .invalidAmount, .tooManyDecimals: .invalidAmount,
        .negativeAmount: .invalidAmount, .amountOutOfRange: .amountOutOfRange,
        .networkNotAllowed: .cardTypeNotSupported, .cardDeclined: .cardDeclined,
        .processorDeclined: .bankError, .processorUnavailable: .bankTimeout,
        .duplicateBankTransactionID: .duplicateBankTransactionID, .notFound: .invalidRecTradeID,
        .refundExceedsCapture: .refundAmountOutOfRange, .captureExceedsAuthorization: .amountOutOfRange,
        .idempotencyConflict: .repeatedRefund, .idempotencyInFlight: .repeatedRequest,
        .merchantDisabled: .partnerUnauthorized, .invalidCredentials: .partnerNotFound,
    ]

    /// `parameter_invalid` by the parameter the domain names.
    static let parameters: [String: TapPayStatus] = [
        "details": .detailsOutOfRange, "order_number": .orderNumberOutOfRange,
        "bank_transaction_id": .bankTransactionIDOutOfRange, "capture.delay_days": .captureDelayOutOfRange,
        "cardholder.name": .nameOutOfRange, "cardholder.email": .emailOutOfRange,
        "cardholder.phone_number": .phoneNumberOutOfRange, "cardholder.zip_code": .zipCodeOutOfRange,
        "cardholder.address": .addressOutOfRange, "cardholder.national_id": .nationalIDOutOfRange,
        "amount": .invalidAmount, "currency": .invalidCurrency,
    ]

    /// Runs `body`, answering the domain's `code` as `status` (a code whose TapPay meaning depends on the call).
    static func mapping<T>(
        _ code: GatewayError.Code, to status: TapPayStatus, _ body: () throws -> T
    ) throws -> T {
        do { return try body() } catch let error as GatewayError {
            guard error.code == code else { throw error }
            throw TapPayRefusal(status, orchardCode: code.rawValue)
        }
    }
}
