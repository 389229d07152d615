#if !canImport(PassKit)
    import Foundation
    import OrchardPay
    @preconcurrency import PassKitShim

    /// Stands in for the system's Apple Pay sheet where PassKit is missing: it shows the presented
    /// `PKPaymentRequest` and plays a customer against the controller's delegate (the SDK's PassKit adapter), as
    /// PassKit does on a device, paying with real-format tokens from the gateway's sandbox wallet.
    @MainActor
    final class PassKitCustomer: PKPaymentAuthorizationPresenter {
        enum Step {
            case selectShippingMethod(String)
            case selectShippingContact(PKContact)
            case selectPaymentMethod(PKPaymentMethodType)
            case enterCouponCode(String)
            /// Does nothing until the app dismisses the sheet.
            case waitForDismiss
            case authorize(billing: PKContact? = nil, shipping: PKContact? = nil)
            case cancel
        }

        let steps: [Step]
        let wallet: GatewayClient
        let card: SandboxCard
        /// Whether the sheet can be shown at all.
        var canPresent = true

        private(set) var presented: [PKPaymentRequest] = []
        private(set) var shippingMethodUpdates: [PKPaymentRequestShippingMethodUpdate] = []
        private(set) var shippingContactUpdates: [PKPaymentRequestShippingContactUpdate] = []
        private(set) var paymentMethodUpdates: [PKPaymentRequestPaymentMethodUpdate] = []
        private(set) var couponCodeUpdates: [PKPaymentRequestCouponCodeUpdate] = []
        private(set) var results: [PKPaymentAuthorizationResult] = []
        private(set) var authorizedAmounts: [String] = []
        private(set) var dismissals = 0
        private(set) var finished = false
        private var summary: [PKPaymentSummaryItem] = []
        private var selectedMethod: PKShippingMethod?
        private var waiters: [CheckedContinuation<Void, Never>] = []

        init(steps: [Step], wallet: GatewayClient, card: SandboxCard = .visaCredit) {
            self.steps = steps
            self.wallet = wallet
            self.card = card
        }

        /// A controller factory for the adapter: controllers this customer's sheet shows.
        func controllers() -> @MainActor (PKPaymentRequest) -> PKPaymentAuthorizationController {
            { [unowned self] in PKPaymentAuthorizationController(paymentRequest: $0, presenter: self) }
        }

        func present(_ controller: PKPaymentAuthorizationController) -> Bool {
            guard canPresent else { return false }
            presented.append(controller.paymentRequest)
            summary = controller.paymentRequest.paymentSummaryItems
            selectedMethod = controller.paymentRequest.shippingMethods?.first
            Task { @MainActor in await self.play(controller) }
            return true
        }

        func dismiss(_ controller: PKPaymentAuthorizationController) {
            dismissals += 1
            finished = true
            for waiter in waiters { waiter.resume() }
            waiters = []
            dismissWaiter?.resume()
            dismissWaiter = nil
        }

        private var dismissWaiter: CheckedContinuation<Void, Never>?

        /// The total the sheet shows now (its last summary item).
        var shownTotal: String { summary.last.map { $0.amount.stringValue } ?? "" }

        /// Returns once the sheet has finished.
        func waitUntilFinished() async {
            if finished { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        private func finish(_ controller: PKPaymentAuthorizationController) {
            guard !finished else { return }
            finished = true
            controller.delegate?.paymentAuthorizationControllerDidFinish(controller)
            for waiter in waiters { waiter.resume() }
            waiters = []
        }

        private func play(_ controller: PKPaymentAuthorizationController) async {
            for step in steps {
                if dismissals > 0 { return }
                guard let delegate = controller.delegate else { return finish(controller) }
                switch step {
                case .selectShippingMethod(let identifier):
                    guard let method = controller.paymentRequest.shippingMethods?.first(where: {
                        $0.identifier == identifier
                    }) else { continue }
                    selectedMethod = method
                    let update = await delegate.paymentAuthorizationController(
                        controller, didSelectShippingMethod: method)
                    shippingMethodUpdates.append(update)
                    summary = update.paymentSummaryItems
                case .selectShippingContact(let contact):
                    let update = await delegate.paymentAuthorizationController(
                        controller, didSelectShippingContact: contact)
                    shippingContactUpdates.append(update)
                    summary = update.paymentSummaryItems
                case .selectPaymentMethod(let type):
                    let method = PKPaymentMethod(
                        displayName: "\(card.network.rawValue) 0000", network: PKPaymentNetwork(card.network.rawValue),
                        type: type)
                    let update = await delegate.paymentAuthorizationController(
                        controller, didSelectPaymentMethod: method)
                    paymentMethodUpdates.append(update)
                    summary = update.paymentSummaryItems
                case .enterCouponCode(let code):
                    let update = await delegate.paymentAuthorizationController(controller, didChangeCouponCode: code)
                    couponCodeUpdates.append(update)
                    summary = update.paymentSummaryItems
                case .authorize(let billing, let shipping):
                    let currency = try! Currency(code: controller.paymentRequest.currencyCode)
                    let amount = try! Money(shownTotal, currency: currency)
                    guard let token = try? await wallet.sandboxWalletToken(amount: amount, card: card) else {
                        return finish(controller)
                    }
                    authorizedAmounts.append(amount.decimalString)
                    let method = PKPaymentMethod(
                        displayName: token.paymentMethod.displayName,
                        network: token.paymentMethod.network.map { PKPaymentNetwork($0.rawValue) },
                        type: token.paymentMethod.type == .debit ? .debit : .credit)
                    let payment = PKPayment(
                        token: PKPaymentToken(
                            paymentMethod: method, transactionIdentifier: token.transactionIdentifier,
                            paymentData: token.paymentData),
                        billingContact: billing, shippingContact: shipping, shippingMethod: selectedMethod)
                    let result = await delegate.paymentAuthorizationController(controller, didAuthorizePayment: payment)
                    results.append(result)
                    // PassKit keeps the sheet open over field errors; otherwise it closes after the result.
                    if result.status == .success || (result.errors ?? []).isEmpty { return finish(controller) }
                case .cancel:
                    return finish(controller)
                case .waitForDismiss:
                    if dismissals == 0 { await withCheckedContinuation { dismissWaiter = $0 } }
                    // PassKit does not call didFinish for the app's own dismiss.
                    return
                }
            }
            finish(controller)
        }
    }

    /// A PassKit contact.
    func passKitContact(
        given: String? = nil, family: String? = nil, email: String? = nil, phone: String? = nil,
        street: String? = nil, city: String? = nil, postalCode: String? = nil, country: String? = nil
    ) -> PKContact {
        let contact = PKContact()
        if given != nil || family != nil {
            var name = PersonNameComponents()
            name.givenName = given
            name.familyName = family
            contact.name = name
        }
        contact.emailAddress = email
        contact.phoneNumber = phone.map { CNPhoneNumber(stringValue: $0) }
        if street != nil || city != nil || postalCode != nil || country != nil {
            let address = CNMutablePostalAddress()
            address.street = street ?? ""
            address.city = city ?? ""
            address.postalCode = postalCode ?? ""
            address.isoCountryCode = country ?? ""
            contact.postalAddress = address
        }
        return contact
    }
#endif
