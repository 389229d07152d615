#if canImport(PassKit)
    @preconcurrency import PassKit
#else
    @preconcurrency import PassKitShim
#endif
import Foundation

/// The Apple Pay sheet on iOS and macOS: `PKPaymentAuthorizationController` with its async delegate forms,
/// translating between PassKit's types and the SDK's (`PassKitMapping`).
///
/// The total is handed to PassKit as `PaymentRequest.amountForApple` (older systems refuse a zero total), and
/// field errors become PassKit's `paymentContactInvalidError(withContactField:…)` and
/// `paymentShippingAddressInvalidError(withKey:…)`. On platforms without PassKit it compiles against
/// PassKitShim, where nothing presents a sheet (``present(_:delegate:)`` answers false).
// Unchecked: PassKit's controller and the presented request and delegate are touched only on the main actor.
public final class PassKitPaymentSheet: NSObject, PaymentSheet, @unchecked Sendable {
    /// How long a selection may take to be answered, in seconds: PassKit allows about 30 (default 25).
    public var handlerBudget: TimeInterval = 25
    /// The system clock.
    public var handlerTimer: any HandlerTimer = SystemHandlerTimer()

    /// Makes the controller for a request: PassKit's own; a stand-in for the system's sheet in tests on platforms
    /// without PassKit.
    package var makeController: @MainActor (PKPaymentRequest) -> PKPaymentAuthorizationController = {
        PKPaymentAuthorizationController(paymentRequest: $0)
    }

    private var controller: PKPaymentAuthorizationController?
    // PassKit holds its delegate weakly; the sheet holds the coordinator until the sheet finishes.
    private var delegate: (any PaymentSheetDelegate)?
    private var request: PaymentRequest?

    /// A sheet.
    public override init() { super.init() }

    /// Presents `PKPaymentAuthorizationController` for `request`.
    public func present(_ request: PaymentRequest, delegate: any PaymentSheetDelegate) async -> Bool {
        await presentOnMain(request, delegate: delegate)
    }

    @MainActor
    private func presentOnMain(_ request: PaymentRequest, delegate: any PaymentSheetDelegate) async -> Bool {
        guard controller == nil else { return false }
        let missing = PassKitMapping.unsupportedFeatures(request)
        if !missing.isEmpty {
            OrchardPaySDK.log("PassKit sheet: this system's PassKit cannot show \(missing.joined(separator: ", "))")
        }
        let controller = makeController(PassKitMapping.passKitRequest(request))
        controller.delegate = self
        self.controller = controller
        self.delegate = delegate
        self.request = request
        let presented = await controller.present()
        if !presented {
            self.controller = nil
            self.delegate = nil
        }
        return presented
    }

    /// Dismisses PassKit's sheet and reports it finished (PassKit does not call `didFinish` for a dismiss from
    /// code).
    public func dismiss() {
        Task { @MainActor in self.dismissOnMain() }
    }

    @MainActor
    private func dismissOnMain() {
        guard let controller else { return }
        finish(controller)
    }

    /// The sheet is gone: dismiss the controller and tell the coordinator, once.
    @MainActor
    private func finish(_ controller: PKPaymentAuthorizationController) {
        let delegate = self.delegate
        self.delegate = nil
        self.controller = nil
        controller.dismiss()
        delegate?.paymentSheetDidFinish(self)
    }

    /// The summary items of an update, with the total at `amountForApple`.
    func updatedSummaryItems(_ update: PaymentRequestUpdate) -> [PKPaymentSummaryItem] {
        guard var shown = request else { return [] }
        shown.lineItems = update.lineItems
        shown.total = update.total
        if let methods = update.shippingMethods { shown.shippingMethods = methods }
        request = shown
        return PassKitMapping.summaryItems(shown)
    }
}

extension PassKitPaymentSheet: PKPaymentAuthorizationControllerDelegate {
    /// The customer authorized: the coordinator charges and answers.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didAuthorizePayment payment: PKPayment
    ) async -> PKPaymentAuthorizationResult {
        guard let delegate else { return PKPaymentAuthorizationResult(status: .failure, errors: nil) }
        let method = PassKitMapping.paymentMethod(payment.token.paymentMethod)
        let selected = payment.shippingMethod?.identifier
        let converted = Payment(
            token: PaymentToken(
                paymentData: payment.token.paymentData, paymentMethod: method,
                transactionIdentifier: payment.token.transactionIdentifier),
            billingContact: payment.billingContact.map(PassKitMapping.contact),
            shippingContact: payment.shippingContact.map(PassKitMapping.contact),
            shippingMethod: request?.shippingMethods.first { $0.identifier == selected })
        let result = await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didAuthorizePayment: converted) { continuation.resume(returning: $0) }
        }
        return PKPaymentAuthorizationResult(
            status: PassKitMapping.passKitStatus(result.status),
            errors: result.errors.isEmpty ? nil : PassKitMapping.passKitErrors(result.errors))
    }

    /// The sheet is gone.
    @MainActor
    public func paymentAuthorizationControllerDidFinish(_ controller: PKPaymentAuthorizationController) {
        guard controller === self.controller else { return }
        finish(controller)
    }

    /// The customer chose a shipping method.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingMethod shippingMethod: PKShippingMethod
    ) async -> PKPaymentRequestShippingMethodUpdate {
        guard let delegate, let request,
            let method = request.shippingMethods.first(where: { $0.identifier == shippingMethod.identifier })
        else {
            return PKPaymentRequestShippingMethodUpdate(
                paymentSummaryItems: request.map(PassKitMapping.summaryItems) ?? [])
        }
        let update = await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didSelectShippingMethod: method) { continuation.resume(returning: $0) }
        }
        let passKit = PKPaymentRequestShippingMethodUpdate(paymentSummaryItems: updatedSummaryItems(update))
        passKit.status = PassKitMapping.passKitStatus(update.status)
        return passKit
    }

    /// The customer chose a shipping contact (redacted by PassKit until authorization).
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingContact contact: PKContact
    ) async -> PKPaymentRequestShippingContactUpdate {
        guard let delegate else {
            return PKPaymentRequestShippingContactUpdate(
                errors: nil, paymentSummaryItems: request.map(PassKitMapping.summaryItems) ?? [], shippingMethods: [])
        }
        let update = await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didSelectShippingContact: PassKitMapping.contact(contact)) {
                continuation.resume(returning: $0)
            }
        }
        let items = updatedSummaryItems(update)
        let passKit = PKPaymentRequestShippingContactUpdate(
            errors: update.errors.isEmpty ? nil : PassKitMapping.passKitErrors(update.errors),
            paymentSummaryItems: items,
            shippingMethods: PassKitMapping.passKitShippingMethods(request?.shippingMethods ?? []))
        passKit.status = PassKitMapping.passKitStatus(update.status)
        return passKit
    }

    /// The customer entered or changed a coupon code.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didChangeCouponCode couponCode: String
    ) async -> PKPaymentRequestCouponCodeUpdate {
        guard let delegate else {
            return PKPaymentRequestCouponCodeUpdate(
                errors: nil, paymentSummaryItems: request.map(PassKitMapping.summaryItems) ?? [], shippingMethods: [])
        }
        let update = await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didChangeCouponCode: couponCode) { continuation.resume(returning: $0) }
        }
        let passKit = PKPaymentRequestCouponCodeUpdate(
            errors: update.errors.isEmpty ? nil : PassKitMapping.passKitErrors(update.errors),
            paymentSummaryItems: updatedSummaryItems(update),
            shippingMethods: PassKitMapping.passKitShippingMethods(request?.shippingMethods ?? []))
        passKit.status = PassKitMapping.passKitStatus(update.status)
        return passKit
    }

    /// The customer chose a card.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectPaymentMethod paymentMethod: PKPaymentMethod
    ) async -> PKPaymentRequestPaymentMethodUpdate {
        guard let delegate else {
            return PKPaymentRequestPaymentMethodUpdate(
                errors: nil, paymentSummaryItems: request.map(PassKitMapping.summaryItems) ?? [])
        }
        let method = PassKitMapping.paymentMethod(paymentMethod)
        let update = await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didSelectPaymentMethod: method) { continuation.resume(returning: $0) }
        }
        let passKit = PKPaymentRequestPaymentMethodUpdate(
            errors: update.errors.isEmpty ? nil : PassKitMapping.passKitErrors(update.errors),
            paymentSummaryItems: updatedSummaryItems(update))
        passKit.status = PassKitMapping.passKitStatus(update.status)
        return passKit
    }
}

/// PassKit's availability answers, the default ``OrchardPaySDK/sheetProvider`` on Apple platforms.
public struct PassKitAvailability: PaymentSheetProvider {
    /// Creates the provider.
    public init() {}
    /// `PKPaymentAuthorizationController.canMakePayments()`.
    public func canMakePayments() -> Bool { PKPaymentAuthorizationController.canMakePayments() }
    /// `PKPaymentAuthorizationController.canMakePayments(usingNetworks:)`.
    public func canMakePayments(usingNetworks networks: [PaymentNetwork]) -> Bool {
        PKPaymentAuthorizationController.canMakePayments(usingNetworks: networks.map(PassKitMapping.passKitNetwork))
    }
    /// `PKPaymentAuthorizationController.canMakePayments(usingNetworks:capabilities:)`.
    public func canMakePayments(usingNetworks networks: [PaymentNetwork], capabilities: [MerchantCapability]) -> Bool {
        PKPaymentAuthorizationController.canMakePayments(
            usingNetworks: networks.map(PassKitMapping.passKitNetwork),
            capabilities: PassKitMapping.passKitCapabilities(capabilities))
    }
    /// `PKPassLibrary().openPaymentSetup()` when the device has a pass library.
    @MainActor
    public func openPaymentSetup() -> Bool {
        guard PKPassLibrary.isPassLibraryAvailable() else { return false }
        PKPassLibrary().openPaymentSetup()
        return true
    }
}

extension ApplePayButtonKind {
    /// PassKit's button for this kind: `callToAction` (default `.buy`; `.checkout`, `.book` …) for ``buy``,
    /// `.setUp` for ``setUp``, none for ``unavailable``.
    public func passKitButtonType(callToAction: PKPaymentButtonType = .buy) -> PKPaymentButtonType? {
        switch self {
        case .buy: callToAction
        case .setUp: .setUp
        case .unavailable: nil
        }
    }
}
