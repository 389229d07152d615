import OrchardBase
import Foundation

/// The payment sheet the coordinators drive: PassKit's sheet on a device (``PassKitPaymentSheet``), a scripted
/// one in tests and development (``SimulatedPaymentSheet``).
///
/// A sheet shows a `PaymentRequest` and reports what the customer does to its ``PaymentSheetDelegate``, in
/// PassKit's completion-handler form: each selection is answered with a ``PaymentRequestUpdate``, the
/// authorization with a ``PaymentAuthorizationResult``, and ``PaymentSheetDelegate/paymentSheetDidFinish(_:)``
/// comes once when the sheet is gone. A sheet shows the total as `PaymentRequest.amountForApple` (1 for an
/// all-pending deferred total).
public protocol PaymentSheet: AnyObject, Sendable {
    /// Shows the sheet for `request`; events go to `delegate` until the sheet finishes. Returns false when the
    /// sheet cannot be shown (then no event follows).
    func present(_ request: PaymentRequest, delegate: any PaymentSheetDelegate) async -> Bool

    /// Closes the sheet from code (the app's own timer ran out …): the delegate gets
    /// ``PaymentSheetDelegate/paymentSheetDidFinish(_:)`` once, and an authorization still being handled is
    /// answered to the closed sheet. Does nothing before ``present(_:delegate:)`` or once the sheet is gone.
    func dismiss()

    /// How long the sheet waits for a selection to be answered before it needs an update, in seconds
    /// (PassKit: about 30). A merchant handler slower than this gets the fallback update instead.
    var handlerBudget: TimeInterval { get }

    /// What measures ``handlerBudget`` (the system clock; a manual one in tests).
    var handlerTimer: any HandlerTimer { get }
}

extension PaymentSheet {
    /// Both flows' `abort()`: `markAborted` (run under the flow's lock) answers whether a sheet is open and, when
    /// it is, marks the flow aborted; then the sheet is dismissed. With no open sheet it only logs.
    func dismissFromCode(flow: String, markAborted: () -> Bool) {
        guard markAborted() else {
            OrchardPaySDK.log("\(flow): abort() without an open sheet; ignored")
            return
        }
        OrchardPaySDK.log("\(flow): the app dismissed the sheet")
        dismiss()
    }
}

/// What a ``PaymentSheet`` tells its coordinator. Every handler must be called exactly once.
public protocol PaymentSheetDelegate: AnyObject, Sendable {
    /// The customer chose a shipping method.
    func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingMethod method: ShippingMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void)
    /// The customer chose or edited a shipping contact (PassKit gives a redacted address before
    /// authorization).
    func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingContact contact: Contact,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void)
    /// The customer chose a card.
    func paymentSheet(
        _ sheet: any PaymentSheet, didSelectPaymentMethod method: PaymentMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void)
    /// The customer entered or changed a coupon code (when the request `PaymentRequest.supportsCouponCode`).
    func paymentSheet(
        _ sheet: any PaymentSheet, didChangeCouponCode couponCode: String,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void)
    /// The customer authorized (Face ID / Touch ID): the token is ready to be charged.
    func paymentSheet(
        _ sheet: any PaymentSheet, didAuthorizePayment payment: Payment,
        handler: @escaping @Sendable (PaymentAuthorizationResult) -> Void)
    /// The sheet is gone: after an authorization result, or because the customer closed it (which may
    /// happen while an authorization is still being handled).
    func paymentSheetDidFinish(_ sheet: any PaymentSheet)
}

/// Measures a handler's time budget.
public protocol HandlerTimer: Sendable {
    /// Returns once `budget` seconds have passed (or the task is cancelled).
    func wait(_ budget: TimeInterval) async
}

/// ``HandlerTimer`` on the system's continuous clock.
public struct SystemHandlerTimer: HandlerTimer {
    /// Creates the timer.
    public init() {}
    /// Sleeps for `budget` seconds.
    public func wait(_ budget: TimeInterval) async { await sleep(seconds: budget) }
}

/// Whether a selection or an authorization went through (PassKit's `PKPaymentAuthorizationStatus`).
public enum PaymentSheetStatus: String, Hashable, Sendable {
    /// Accepted.
    case success
    /// Refused; ``PaymentRequestUpdate/errors`` or ``PaymentAuthorizationResult/errors`` say why.
    case failure
}

/// The sheet's new summary after a selection (PassKit's `PKPaymentRequestShippingMethodUpdate`,
/// `PKPaymentRequestShippingContactUpdate`, `PKPaymentRequestPaymentMethodUpdate`).
public struct PaymentRequestUpdate: Hashable, Sendable {
    /// Accepted or refused.
    public var status: PaymentSheetStatus
    /// The line items to show.
    public var lineItems: [SummaryItem]
    /// The total to show (the sheet shows its `PaymentRequest.amountForApple`).
    public var total: SummaryItem
    /// The shipping methods to offer, when they change.
    public var shippingMethods: [ShippingMethod]?
    /// What is wrong with the selection (an invalid contact field …).
    public var errors: [PaymentSheetError]

    /// Creates an update.
    public init(
        status: PaymentSheetStatus = .success, lineItems: [SummaryItem], total: SummaryItem,
        shippingMethods: [ShippingMethod]? = nil, errors: [PaymentSheetError] = []
    ) {
        self.status = status
        self.lineItems = lineItems
        self.total = total
        self.shippingMethods = shippingMethods
        self.errors = errors
    }

    /// The update that shows `request`'s summary again: what a sheet gets when the merchant's handler missed
    /// the budget.
    public static func unchanged(_ request: PaymentRequest) -> PaymentRequestUpdate {
        PaymentRequestUpdate(lineItems: request.lineItems, total: request.total)
    }
}

/// The answer to an authorization (PassKit's `PKPaymentAuthorizationResult`).
public struct PaymentAuthorizationResult: Hashable, Sendable {
    /// Charged (the sheet shows a check mark and closes) or not.
    public var status: PaymentSheetStatus
    /// Fields to fix: with errors the sheet stays open so the customer can correct them and authorize again.
    public var errors: [PaymentSheetError]

    /// Creates a result.
    public init(status: PaymentSheetStatus, errors: [PaymentSheetError] = []) {
        self.status = status
        self.errors = errors
    }
}

/// A problem the sheet shows next to a field (PassKit's `PKPaymentError`: `shippingContactInvalid`,
/// `billingContactInvalid`, `addressUnserviceable`, the coupon errors; Apple Pay JS's `ApplePayError`).
///
/// On PassKit's sheet each becomes the error that highlights its field: with a ``contactField`` (and, for an
/// address, a ``postalAddressKey``) the field itself, without one the shipping or billing section; the coupon
/// codes mark the coupon field. Only ``Code/unknown`` is a general failure.
public struct PaymentSheetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem, as PassKit names it.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// A shipping contact field is missing or invalid (`PKPaymentError.shippingContactInvalidError`).
        case shippingContactInvalid
        /// A billing contact field is missing or invalid (`PKPaymentError.billingContactInvalidError`).
        case billingContactInvalid
        /// The merchant cannot ship to the address (`PKPaymentError.shippingAddressUnserviceableError`).
        case shippingAddressUnserviceable
        /// The coupon code is not valid (`PKPaymentError.couponCodeInvalidError`).
        case couponCodeInvalid
        /// The coupon code has expired (`PKPaymentError.couponCodeExpiredError`).
        case couponCodeExpired
        /// Something else (`PKPaymentError.unknownError`): the sheet shows a general failure.
        case unknown
    }

    /// The kind of problem.
    public var code: Code
    /// The contact field at fault (`PKContactField`), when known.
    public var contactField: ContactField?
    /// The postal address key at fault (`CNPostalAddressPostalCodeKey` …: `street`, `city`, `postalCode`,
    /// `country`, `ISOCountryCode`, `state`), for a `postalAddress` field.
    public var postalAddressKey: String?
    /// What the sheet shows.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, contactField: ContactField? = nil, postalAddressKey: String? = nil, message: String) {
        self.code = code
        self.contactField = contactField
        self.postalAddressKey = postalAddressKey
        self.message = message
    }

    /// `code(field): message`.
    public var description: String {
        let field = [contactField?.rawValue, postalAddressKey].compactMap { $0 }.joined(separator: ".")
        return "\(code.rawValue)\(field.isEmpty ? "" : "(\(field))"): \(message)"
    }
}

// MARK: Contact rules

/// The postal address keys PassKit's `paymentShippingAddressInvalidError(withKey:)` takes (Contacts'
/// `CNPostalAddress…Key` values).
public enum PostalAddressKey {
    /// `CNPostalAddressStreetKey`.
    public static let street = "street"
    /// `CNPostalAddressCityKey`.
    public static let city = "city"
    /// `CNPostalAddressPostalCodeKey`.
    public static let postalCode = "postalCode"
    /// `CNPostalAddressCountryKey`.
    public static let country = "country"
    /// `CNPostalAddressISOCountryCodeKey`.
    public static let isoCountryCode = "ISOCountryCode"
}

extension Contact {
    /// The first problem of this contact against the `required` fields, as `code` (shipping or billing):
    /// a missing name, an email without `@`, a phone without digits, an address without street, city,
    /// postal code or country. `nil` when every required field is present.
    public func problem(
        required: [ContactField], as code: PaymentSheetError.Code = .shippingContactInvalid
    ) -> PaymentSheetError? {
        func blank(_ value: String?) -> Bool { value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true }
        for field in required {
            switch field {
            case .name where blank(givenName) && blank(familyName):
                return PaymentSheetError(code, contactField: .name, message: "Enter a name")
            case .email where !(emailAddress.map { Self.isEmail($0) } ?? false):
                return PaymentSheetError(code, contactField: .email, message: "Enter a valid email address")
            case .phone where !(phoneNumber.map { $0.contains(where: \.isNumber) && $0.count <= 32 } ?? false):
                return PaymentSheetError(code, contactField: .phone, message: "Enter a phone number")
            case .postalAddress:
                let lines = addressLines?.joined() ?? ""
                for (key, value, message) in [
                    (PostalAddressKey.street, lines, "Enter a street address"),
                    (PostalAddressKey.city, locality ?? "", "Enter a city"),
                    (PostalAddressKey.postalCode, postalCode ?? "", "Enter a postal code"),
                    (PostalAddressKey.isoCountryCode, countryCode ?? country ?? "", "Enter a country"),
                ] where blank(value) {
                    return PaymentSheetError(
                        code, contactField: .postalAddress, postalAddressKey: key, message: message)
                }
            default:
                continue
            }
        }
        return nil
    }

    private static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return text.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
            && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".") && !text.contains(" ")
    }
}

// MARK: Budget

/// Runs a merchant handler against a sheet's time budget: the first of the handler's answer and the budget's
/// end answers the sheet, once.
final class BudgetedAnswer<Value: Sendable>: Sendable {
    private let answered = Locked(false)
    private let timer = Locked<Task<Void, Never>?>(nil)
    private let deliver: @Sendable (Value) -> Void

    init(_ deliver: @escaping @Sendable (Value) -> Void) { self.deliver = deliver }

    /// Takes the right to answer; true for the first caller only.
    func claim() -> Bool {
        answered.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
    }

    /// Answers with `value` unless already answered; true when this call answered.
    @discardableResult
    func answer(_ value: Value) -> Bool {
        answer(value) {}
    }

    /// Answers with `value`, running `onWin` first (while no other answer can go out), unless already
    /// answered; true when this call answered.
    @discardableResult
    func answer(_ value: Value, onWin: () -> Void) -> Bool {
        guard claim() else { return false }
        timer.withLock { $0?.cancel() }
        onWin()
        deliver(value)
        return true
    }

    /// Answers `fallback()` when `budget` passes first.
    func arm(budget: TimeInterval, timer: any HandlerTimer, fallback: @escaping @Sendable () -> Value) {
        let task = Task {
            await timer.wait(budget)
            guard !Task.isCancelled else { return }
            if self.answer(fallback()) {
                OrchardPaySDK.log("a merchant handler missed the sheet's budget; the sheet got the fallback update")
            }
        }
        self.timer.withLock { $0 = task }
    }
}

/// Sleeps `seconds` (or until the task is cancelled), with `Task.sleep(nanoseconds:)`, which iOS 15 has.
func sleep(seconds: TimeInterval) async {
    try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
}

/// Where a coordinator (``ApplePayCheckout``, ``ApplePayContext``) calls its delegate.
public enum DelegateCallbacks: String, Hashable, Sendable {
    /// On the main actor, one at a time, as PassKit and TapPay's SDK call theirs: UI work needs no hop. The
    /// default. A delegate method must not block (it would hold the main actor, and PassKit's sheet with it).
    case mainActor
    /// One at a time off the main thread and off the Swift concurrency pool (a blocking call cannot starve
    /// either): the SDK's behaviour before callbacks moved to the main actor. Hop to the main actor for UI work.
    case background

    /// Runs `body` where the delegate is called.
    func run(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .mainActor: Task { @MainActor in body() }
        case .background: runOffPool(body)
        }
    }

    /// Runs the asynchronous `body` from where the delegate is called: started on the main actor (an
    /// implementation isolated to it runs there), or on the concurrency pool.
    func run<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) async -> Result {
        switch self {
        case .mainActor: await Task { @MainActor in await body() }.value
        case .background: await body()
        }
    }
}

/// Runs a synchronous merchant callback off the Swift concurrency pool, so one that blocks cannot starve it.
func runOffPool(_ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global(qos: .userInitiated).async(execute: work)
}
