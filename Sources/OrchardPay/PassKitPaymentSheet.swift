#if canImport(PassKit)
    import Contacts
    import Foundation
    @preconcurrency import PassKit

    /// The Apple Pay sheet on iOS and macOS: `PKPaymentAuthorizationController` with its async delegate forms,
    /// translating between PassKit's types and the SDK's.
    ///
    /// The total is handed to PassKit as ``PaymentRequest/amountForApple`` (older systems refuse a zero
    /// total), and field errors become PassKit's `paymentContactInvalidError(withContactField:…)` and
    /// `paymentShippingAddressInvalidError(withKey:…)`.
    // Unchecked: PassKit's controller and the presented request and delegate are touched only on the main actor.
    public final class PassKitPaymentSheet: NSObject, PaymentSheet, @unchecked Sendable {
        /// How long a selection may take to be answered, in seconds: PassKit allows about 30 (default 25).
        public var handlerBudget: TimeInterval = 25
        /// The system clock.
        public var handlerTimer: any HandlerTimer = SystemHandlerTimer()

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
            let controller = PKPaymentAuthorizationController(paymentRequest: Self.passKitRequest(request))
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

        // MARK: Translation

        static func passKitRequest(_ request: PaymentRequest) -> PKPaymentRequest {
            let passKit = PKPaymentRequest()
            passKit.merchantIdentifier = request.merchantIdentifier ?? ""
            passKit.countryCode = request.countryCode?.code ?? ""
            passKit.currencyCode = (request.currency ?? request.total.amount.currency).code
            passKit.supportedNetworks = request.supportedNetworks.map(passKitNetwork)
            passKit.merchantCapabilities = passKitCapabilities(request.merchantCapabilities)
            passKit.paymentSummaryItems = summaryItems(request)
            passKit.shippingMethods = request.shippingMethods.map(passKitShippingMethod)
            if let type = request.shippingType { passKit.shippingType = passKitShippingType(type) }
            passKit.requiredShippingContactFields = Set(request.requiredShippingContactFields.map(passKitField))
            passKit.requiredBillingContactFields = Set(request.requiredBillingContactFields.map(passKitField))
            if !request.supportedCountries.isEmpty {
                passKit.supportedCountries = Set(request.supportedCountries.map(\.code))
            }
            if let data = request.applicationData { passKit.applicationData = Data(base64Encoded: data) }
            return passKit
        }

        /// The line items, then the total (labelled with the merchant's name) at `amountForApple`.
        static func summaryItems(_ request: PaymentRequest) -> [PKPaymentSummaryItem] {
            var items = request.lineItems.map { item in
                PKPaymentSummaryItem(
                    label: item.label, amount: NSDecimalNumber(decimal: item.amount.amount),
                    type: item.type == .pending ? .pending : .final)
            }
            items.append(
                PKPaymentSummaryItem(
                    label: request.total.label, amount: NSDecimalNumber(decimal: request.amountForApple.amount),
                    type: request.total.type == .pending ? .pending : .final))
            return items
        }

        static func passKitShippingMethod(_ method: ShippingMethod) -> PKShippingMethod {
            let passKit = PKShippingMethod(label: method.label, amount: NSDecimalNumber(decimal: method.amount.amount))
            passKit.identifier = method.identifier
            passKit.detail = method.detail
            if let range = method.dateComponentsRange {
                passKit.dateComponentsRange = PKDateComponentsRange(
                    start: dateComponents(range.start), end: dateComponents(range.end))
            }
            return passKit
        }

        static func dateComponents(_ value: DateComponentsValue) -> DateComponents {
            let calendar = Calendar(identifier: .gregorian)
            var offset = DateComponents()
            offset.year = value.years
            offset.month = value.months
            offset.day = value.days
            offset.hour = value.hours
            let date = calendar.date(byAdding: offset, to: Date()) ?? Date()
            return calendar.dateComponents([.calendar, .year, .month, .day], from: date)
        }

        static func passKitNetwork(_ network: PaymentNetwork) -> PKPaymentNetwork {
            switch network {
            case .amex: return .amex
            case .visa: return .visa
            case .masterCard: return .masterCard
            case .jcb: return .JCB
            case .chinaUnionPay: return .chinaUnionPay
            case .discover: return .discover
            case .maestro: return .maestro
            case .interac: return .interac
            case .electron: return .electron
            case .elo: return .elo
            case .mada: return .mada
            case .eftpos: return .eftpos
            case .cartesBancaires: return .cartesBancaires
            case .girocard: return .girocard
            case .quicPay: return .quicPay
            case .suica: return .suica
            case .idCredit: return .idCredit
            case .privateLabel: return .privateLabel
            case .vPay: return .vPay
            default:
                let name = network.rawValue
                return PKPaymentNetwork(rawValue: name.prefix(1).uppercased() + name.dropFirst())
            }
        }

        static func passKitCapabilities(_ capabilities: [MerchantCapability]) -> PKMerchantCapability {
            var set: PKMerchantCapability = []
            for capability in capabilities {
                switch capability {
                case .supports3DS: set.insert(.threeDSecure)
                case .supportsEMV: set.insert(.emv)
                case .supportsCredit: set.insert(.credit)
                case .supportsDebit: set.insert(.debit)
                case .supportsInstantFundsOut:
                    if #available(iOS 17.0, macOS 14.0, *) { set.insert(.instantFundsOut) }
                default: continue
                }
            }
            return set
        }

        static func passKitShippingType(_ type: ShippingType) -> PKShippingType {
            switch type {
            case .delivery: .delivery
            case .storePickup: .storePickup
            case .servicePickup: .servicePickup
            default: .shipping
            }
        }

        static func passKitField(_ field: ContactField) -> PKContactField {
            switch field {
            case .email: .emailAddress
            case .name: .name
            case .phone: .phoneNumber
            case .phoneticName: .phoneticName
            default: .postalAddress
            }
        }

        static func contact(_ passKit: PKContact) -> Contact {
            var contact = Contact()
            contact.givenName = passKit.name?.givenName
            contact.familyName = passKit.name?.familyName
            contact.phoneticGivenName = passKit.name?.phoneticRepresentation?.givenName
            contact.phoneticFamilyName = passKit.name?.phoneticRepresentation?.familyName
            contact.emailAddress = passKit.emailAddress
            contact.phoneNumber = passKit.phoneNumber?.stringValue
            if let address = passKit.postalAddress {
                contact.addressLines = address.street.isEmpty ? nil : address.street.components(separatedBy: "\n")
                contact.subLocality = address.subLocality
                contact.locality = address.city
                contact.postalCode = address.postalCode
                contact.subAdministrativeArea = address.subAdministrativeArea
                contact.administrativeArea = address.state
                contact.country = address.country
                contact.countryCode = address.isoCountryCode.uppercased()
            }
            return contact
        }

        static func paymentMethod(_ passKit: PKPaymentMethod) -> PaymentMethod {
            let type: PaymentMethodType
            switch passKit.type {
            case .debit: type = .debit
            case .credit: type = .credit
            case .prepaid: type = .prepaid
            case .store: type = .store
            case .eMoney: type = .eMoney
            case .unknown: type = .unknown
            @unknown default: type = .unknown
            }
            return PaymentMethod(
                type: type, network: passKit.network.map { PaymentNetwork(rawValue: $0.rawValue) },
                displayName: passKit.displayName)
        }

        static func passKitErrors(_ errors: [PaymentSheetError]) -> [Error] {
            errors.map { error in
                switch (error.code, error.contactField, error.postalAddressKey) {
                case (.shippingContactInvalid, .postalAddress, let key?):
                    return PKPaymentRequest.paymentShippingAddressInvalidError(
                        withKey: key, localizedDescription: error.message)
                case (.billingContactInvalid, _, let key?):
                    return PKPaymentRequest.paymentBillingAddressInvalidError(
                        withKey: key, localizedDescription: error.message)
                case (.shippingContactInvalid, let field?, _):
                    return PKPaymentRequest.paymentContactInvalidError(
                        withContactField: passKitField(field), localizedDescription: error.message)
                case (.shippingAddressUnserviceable, _, _):
                    return PKPaymentRequest.paymentShippingAddressUnserviceableError(
                        withLocalizedDescription: error.message)
                default:
                    return NSError(
                        domain: PKPaymentErrorDomain, code: PKPaymentError.Code.unknownError.rawValue,
                        userInfo: [NSLocalizedDescriptionKey: error.message])
                }
            }
        }

        /// PassKit's status for a sheet status.
        static func passKitStatus(_ status: PaymentSheetStatus) -> PKPaymentAuthorizationStatus {
            status == .success ? .success : .failure
        }

        /// The summary items of an update, with the total at `amountForApple`.
        func updatedSummaryItems(_ update: PaymentRequestUpdate) -> [PKPaymentSummaryItem] {
            guard var shown = request else { return [] }
            shown.lineItems = update.lineItems
            shown.total = update.total
            if let methods = update.shippingMethods { shown.shippingMethods = methods }
            request = shown
            return Self.summaryItems(shown)
        }
    }

    extension PassKitPaymentSheet: @preconcurrency PKPaymentAuthorizationControllerDelegate {
        /// The customer authorized: the coordinator charges and answers.
        @MainActor
        public func paymentAuthorizationController(
            _ controller: PKPaymentAuthorizationController, didAuthorizePayment payment: PKPayment
        ) async -> PKPaymentAuthorizationResult {
            guard let delegate else { return PKPaymentAuthorizationResult(status: .failure, errors: nil) }
            let method = Self.paymentMethod(payment.token.paymentMethod)
            let selected = payment.shippingMethod?.identifier
            let converted = Payment(
                token: PaymentToken(
                    paymentData: payment.token.paymentData, paymentMethod: method,
                    transactionIdentifier: payment.token.transactionIdentifier),
                billingContact: payment.billingContact.map(Self.contact),
                shippingContact: payment.shippingContact.map(Self.contact),
                shippingMethod: request?.shippingMethods.first { $0.identifier == selected })
            let result = await withCheckedContinuation { continuation in
                delegate.paymentSheet(self, didAuthorizePayment: converted) { continuation.resume(returning: $0) }
            }
            return PKPaymentAuthorizationResult(
                status: Self.passKitStatus(result.status),
                errors: result.errors.isEmpty ? nil : Self.passKitErrors(result.errors))
        }

        /// The sheet is gone.
        @MainActor
        public func paymentAuthorizationControllerDidFinish(_ controller: PKPaymentAuthorizationController) {
            let delegate = self.delegate
            self.delegate = nil
            self.controller = nil
            controller.dismiss()
            delegate?.paymentSheetDidFinish(self)
        }

        /// The customer chose a shipping method.
        @MainActor
        public func paymentAuthorizationController(
            _ controller: PKPaymentAuthorizationController, didSelectShippingMethod shippingMethod: PKShippingMethod
        ) async -> PKPaymentRequestShippingMethodUpdate {
            guard let delegate, let request,
                let method = request.shippingMethods.first(where: { $0.identifier == shippingMethod.identifier })
            else {
                return PKPaymentRequestShippingMethodUpdate(paymentSummaryItems: request.map(Self.summaryItems) ?? [])
            }
            let update = await withCheckedContinuation { continuation in
                delegate.paymentSheet(self, didSelectShippingMethod: method) { continuation.resume(returning: $0) }
            }
            let passKit = PKPaymentRequestShippingMethodUpdate(paymentSummaryItems: updatedSummaryItems(update))
            passKit.status = Self.passKitStatus(update.status)
            return passKit
        }

        /// The customer chose a shipping contact (redacted by PassKit until authorization).
        @MainActor
        public func paymentAuthorizationController(
            _ controller: PKPaymentAuthorizationController, didSelectShippingContact contact: PKContact
        ) async -> PKPaymentRequestShippingContactUpdate {
            guard let delegate else {
                return PKPaymentRequestShippingContactUpdate(
                    errors: nil, paymentSummaryItems: request.map(Self.summaryItems) ?? [], shippingMethods: [])
            }
            let update = await withCheckedContinuation { continuation in
                delegate.paymentSheet(self, didSelectShippingContact: Self.contact(contact)) {
                    continuation.resume(returning: $0)
                }
            }
            let items = updatedSummaryItems(update)
            let passKit = PKPaymentRequestShippingContactUpdate(
                errors: update.errors.isEmpty ? nil : Self.passKitErrors(update.errors), paymentSummaryItems: items,
                shippingMethods: (request?.shippingMethods ?? []).map(Self.passKitShippingMethod))
            passKit.status = Self.passKitStatus(update.status)
            return passKit
        }

        /// The customer chose a card.
        @MainActor
        public func paymentAuthorizationController(
            _ controller: PKPaymentAuthorizationController, didSelectPaymentMethod paymentMethod: PKPaymentMethod
        ) async -> PKPaymentRequestPaymentMethodUpdate {
            guard let delegate else {
                return PKPaymentRequestPaymentMethodUpdate(
                    errors: nil, paymentSummaryItems: request.map(Self.summaryItems) ?? [])
            }
            let method = Self.paymentMethod(paymentMethod)
            let update = await withCheckedContinuation { continuation in
                delegate.paymentSheet(self, didSelectPaymentMethod: method) { continuation.resume(returning: $0) }
            }
            let passKit = PKPaymentRequestPaymentMethodUpdate(
                errors: update.errors.isEmpty ? nil : Self.passKitErrors(update.errors),
                paymentSummaryItems: updatedSummaryItems(update))
            passKit.status = Self.passKitStatus(update.status)
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
            PKPaymentAuthorizationController.canMakePayments(
                usingNetworks: networks.map(PassKitPaymentSheet.passKitNetwork))
        }
    }
#endif
