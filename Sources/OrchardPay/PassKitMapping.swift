#if canImport(PassKit)
    import Contacts
    @preconcurrency import PassKit
#else
    @preconcurrency import PassKitShim
#endif
import Foundation

/// The translation between the SDK's types and PassKit's, as pure functions: what ``PassKitPaymentSheet`` hands
/// PassKit and what it reads back. On platforms without PassKit they compile against PassKitShim, so they are
/// tested there.
package enum PassKitMapping {
    // MARK: The request

    /// `request` as PassKit's request: everything the model says that PassKit can say. The features newer than
    /// the platform floor (iOS 15) are set where the system has them: recurring, automatic-reload and multi-token
    /// requests from iOS 16, deferred ones from iOS 16.4; on an older system the sheet shows the payment without
    /// them, and ``unsupportedFeatures(_:)`` names what it left out.
    package static func passKitRequest(_ request: PaymentRequest) -> PKPaymentRequest {
        let passKit = PKPaymentRequest()
        passKit.merchantIdentifier = request.merchantIdentifier ?? ""
        passKit.countryCode = request.countryCode?.code ?? ""
        passKit.currencyCode = (request.currency ?? request.total.amount.currency).code
        passKit.supportedNetworks = request.supportedNetworks.map(passKitNetwork)
        passKit.merchantCapabilities = passKitCapabilities(request.merchantCapabilities)
        passKit.paymentSummaryItems = summaryItems(request)
        passKit.shippingMethods = passKitShippingMethods(request.shippingMethods)
        if let type = request.shippingType { passKit.shippingType = passKitShippingType(type) }
        passKit.requiredShippingContactFields = Set(request.requiredShippingContactFields.map(passKitField))
        passKit.requiredBillingContactFields = Set(request.requiredBillingContactFields.map(passKitField))
        passKit.billingContact = request.billingContact.map(passKitContact)
        passKit.shippingContact = request.shippingContact.map(passKitContact)
        if let mode = request.shippingContactEditingMode {
            passKit.shippingContactEditingMode = mode == .storePickup ? .storePickup : .available
        }
        passKit.supportsCouponCode = request.supportsCouponCode ?? false
        passKit.couponCode = request.couponCode
        if !request.supportedCountries.isEmpty {
            passKit.supportedCountries = Set(request.supportedCountries.map(\.code))
        }
        if let data = request.applicationData { passKit.applicationData = Data(base64Encoded: data) }
        if #available(iOS 16.0, macOS 13.0, *) {
            passKit.recurringPaymentRequest = request.recurringPaymentRequest.flatMap(passKitRecurring)
            passKit.automaticReloadPaymentRequest = request.automaticReloadPaymentRequest.flatMap(passKitReload)
            passKit.multiTokenContexts = request.multiTokenContexts.map(passKitTokenContext)
        }
        if #available(iOS 16.4, macOS 13.3, *) {
            passKit.deferredPaymentRequest = request.deferredPaymentRequest.flatMap(passKitDeferred)
        }
        return passKit
    }

    /// What `request` says that this system's PassKit cannot (before iOS 16 and 16.4), for the log.
    package static func unsupportedFeatures(_ request: PaymentRequest) -> [String] {
        var missing: [String] = []
        if #available(iOS 16.0, macOS 13.0, *) {} else {
            if request.recurringPaymentRequest != nil { missing.append("recurringPaymentRequest (iOS 16)") }
            if request.automaticReloadPaymentRequest != nil {
                missing.append("automaticReloadPaymentRequest (iOS 16)")
            }
            if !request.multiTokenContexts.isEmpty { missing.append("multiTokenContexts (iOS 16)") }
        }
        if #available(iOS 16.4, macOS 13.3, *) {} else {
            if request.deferredPaymentRequest != nil { missing.append("deferredPaymentRequest (iOS 16.4)") }
        }
        return missing
    }

    /// The line items, then the total (labelled with the merchant's name) at `amountForApple`. An item with a
    /// recurring, deferred or automatic-reload timing is PassKit's summary item of that kind.
    package static func summaryItems(_ request: PaymentRequest) -> [PKPaymentSummaryItem] {
        var items = request.lineItems.map(summaryItem)
        var total = request.total
        total.amount = request.amountForApple
        items.append(summaryItem(total))
        return items
    }

    /// One summary item: PassKit's class for its payment timing, with its schedule.
    package static func summaryItem(_ item: SummaryItem) -> PKPaymentSummaryItem {
        let amount = NSDecimalNumber(decimal: item.amount.amount)
        let type: PKPaymentSummaryItemType = item.type == .pending ? .pending : .final
        switch item.paymentTiming {
        case .recurring?: return recurringItem(item)
        case .deferred?:
            let deferred = PKDeferredPaymentSummaryItem(label: item.label, amount: amount, type: type)
            if let date = item.deferredPaymentDate.flatMap(PaymentRequestValidator.date) { deferred.deferredDate = date }
            return deferred
        case .automaticReload?:
            let reload = PKAutomaticReloadPaymentSummaryItem(label: item.label, amount: amount, type: type)
            if let threshold = item.automaticReloadPaymentThresholdAmount {
                reload.thresholdAmount = NSDecimalNumber(decimal: threshold.amount)
            }
            return reload
        default:
            return PKPaymentSummaryItem(label: item.label, amount: amount, type: type)
        }
    }

    static func recurringItem(_ item: SummaryItem) -> PKRecurringPaymentSummaryItem {
        let recurring = PKRecurringPaymentSummaryItem(
            label: item.label, amount: NSDecimalNumber(decimal: item.amount.amount),
            type: item.type == .pending ? .pending : .final)
        recurring.startDate = item.recurringPaymentStartDate.flatMap(PaymentRequestValidator.date)
        recurring.endDate = item.recurringPaymentEndDate.flatMap(PaymentRequestValidator.date)
        if let unit = item.recurringPaymentIntervalUnit.flatMap(calendarUnit) { recurring.intervalUnit = unit }
        if let count = item.recurringPaymentIntervalCount { recurring.intervalCount = count }
        return recurring
    }

    package static func calendarUnit(_ unit: RecurringIntervalUnit) -> NSCalendar.Unit? {
        switch unit {
        case .year: .year
        case .month: .month
        case .day: .day
        case .hour: .hour
        case .minute: .minute
        default: nil
        }
    }

    @available(iOS 16.0, macOS 13.0, *)
    static func passKitRecurring(_ request: RecurringPaymentRequest) -> PKRecurringPaymentRequest? {
        guard let url = URL(string: request.managementURL) else { return nil }
        let passKit = PKRecurringPaymentRequest(
            paymentDescription: request.paymentDescription, regularBilling: recurringItem(request.regularBilling),
            managementURL: url)
        passKit.trialBilling = request.trialBilling.map(recurringItem)
        passKit.billingAgreement = request.billingAgreement
        passKit.tokenNotificationURL = request.tokenNotificationURL.flatMap(URL.init(string:))
        return passKit
    }

    @available(iOS 16.0, macOS 13.0, *)
    static func passKitReload(_ request: AutomaticReloadPaymentRequest) -> PKAutomaticReloadPaymentRequest? {
        guard let url = URL(string: request.managementURL), let billing = reloadItem(request.automaticReloadBilling)
        else { return nil }
        let passKit = PKAutomaticReloadPaymentRequest(
            paymentDescription: request.paymentDescription, automaticReloadBilling: billing, managementURL: url)
        passKit.billingAgreement = request.billingAgreement
        passKit.tokenNotificationURL = request.tokenNotificationURL.flatMap(URL.init(string:))
        return passKit
    }

    /// The billing item as an automatic-reload item whatever timing the model gave it.
    static func reloadItem(_ item: SummaryItem) -> PKAutomaticReloadPaymentSummaryItem? {
        var reload = item
        reload.paymentTiming = .automaticReload
        return summaryItem(reload) as? PKAutomaticReloadPaymentSummaryItem
    }

    @available(iOS 16.4, macOS 13.3, *)
    static func passKitDeferred(_ request: DeferredPaymentRequest) -> PKDeferredPaymentRequest? {
        var item = request.deferredBilling
        item.paymentTiming = .deferred
        guard let url = URL(string: request.managementURL),
            let billing = summaryItem(item) as? PKDeferredPaymentSummaryItem
        else { return nil }
        let passKit = PKDeferredPaymentRequest(
            paymentDescription: request.paymentDescription, deferredBilling: billing, managementURL: url)
        passKit.billingAgreement = request.billingAgreement
        passKit.tokenNotificationURL = request.tokenNotificationURL.flatMap(URL.init(string:))
        passKit.freeCancellationDate = request.freeCancellationDate.flatMap(PaymentRequestValidator.date)
        passKit.freeCancellationDateTimeZone = request.freeCancellationDateTimeZone.flatMap(TimeZone.init(identifier:))
        return passKit
    }

    @available(iOS 16.0, macOS 13.0, *)
    static func passKitTokenContext(_ context: MultiTokenContext) -> PKPaymentTokenContext {
        PKPaymentTokenContext(
            merchantIdentifier: context.merchantIdentifier, externalIdentifier: context.externalIdentifier,
            merchantName: context.merchantName, merchantDomain: context.merchantDomain,
            amount: NSDecimalNumber(decimal: context.amount.amount))
    }

    /// A prefilled contact as PassKit's.
    package static func passKitContact(_ contact: Contact) -> PKContact {
        let passKit = PKContact()
        if contact.givenName != nil || contact.familyName != nil || contact.phoneticGivenName != nil
            || contact.phoneticFamilyName != nil
        {
            var name = PersonNameComponents()
            name.givenName = contact.givenName
            name.familyName = contact.familyName
            if contact.phoneticGivenName != nil || contact.phoneticFamilyName != nil {
                var phonetic = PersonNameComponents()
                phonetic.givenName = contact.phoneticGivenName
                phonetic.familyName = contact.phoneticFamilyName
                name.phoneticRepresentation = phonetic
            }
            passKit.name = name
        }
        passKit.emailAddress = contact.emailAddress
        passKit.phoneNumber = contact.phoneNumber.map { CNPhoneNumber(stringValue: $0) }
        let addressFields: [String?] = [
            contact.addressLines?.joined(), contact.subLocality, contact.locality, contact.postalCode,
            contact.subAdministrativeArea, contact.administrativeArea, contact.country, contact.countryCode,
        ]
        if addressFields.contains(where: { $0 != nil }) {
            let address = CNMutablePostalAddress()
            address.street = contact.addressLines?.joined(separator: "\n") ?? ""
            address.subLocality = contact.subLocality ?? ""
            address.city = contact.locality ?? ""
            address.postalCode = contact.postalCode ?? ""
            address.subAdministrativeArea = contact.subAdministrativeArea ?? ""
            address.state = contact.administrativeArea ?? ""
            address.country = contact.country ?? ""
            address.isoCountryCode = contact.countryCode ?? ""
            passKit.postalAddress = address
        }
        return passKit
    }

    /// The shipping methods in PassKit's order: the selected one first (PassKit's sheet opens on the first),
    /// then the others as listed.
    package static func passKitShippingMethods(_ methods: [ShippingMethod]) -> [PKShippingMethod] {
        let selected = methods.filter { $0.selected == true }.prefix(1)
        let others = methods.filter { method in !selected.contains { $0.identifier == method.identifier } }
        return (selected + others).map(passKitShippingMethod)
    }

    package static func passKitShippingMethod(_ method: ShippingMethod) -> PKShippingMethod {
        let passKit = PKShippingMethod(label: method.label, amount: NSDecimalNumber(decimal: method.amount.amount))
        passKit.identifier = method.identifier
        passKit.detail = method.detail
        if let range = method.dateComponentsRange {
            passKit.dateComponentsRange = PKDateComponentsRange(
                start: dateComponents(range.start), end: dateComponents(range.end))
        }
        return passKit
    }

    package static func dateComponents(_ value: DateComponentsValue) -> DateComponents {
        let calendar = Calendar(identifier: .gregorian)
        var offset = DateComponents()
        offset.year = value.years
        offset.month = value.months
        offset.day = value.days
        offset.hour = value.hours
        let date = calendar.date(byAdding: offset, to: Date()) ?? Date()
        return calendar.dateComponents([.calendar, .year, .month, .day], from: date)
    }

    // MARK: Vocabulary

    /// Each network PassKit names with a constant, beside the SDK's; the others go by PassKit's string.
    package static let networks: [(PaymentNetwork, PKPaymentNetwork)] = [
        (.amex, .amex), (.visa, .visa), (.masterCard, .masterCard), (.jcb, .JCB), (.chinaUnionPay, .chinaUnionPay),
        (.discover, .discover), (.maestro, .maestro), (.interac, .interac), (.electron, .electron), (.elo, .elo),
        (.mada, .mada), (.eftpos, .eftpos), (.cartesBancaires, .cartesBancaires), (.girocard, .girocard),
        (.quicPay, .quicPay), (.suica, .suica), (.idCredit, .idCredit), (.privateLabel, .privateLabel),
        (.vPay, .vPay),
    ]

    package static func passKitNetwork(_ network: PaymentNetwork) -> PKPaymentNetwork {
        if let known = networks.first(where: { $0.0 == network }) { return known.1 }
        let name = network.rawValue
        return PKPaymentNetwork(rawValue: name.prefix(1).uppercased() + name.dropFirst())
    }

    package static func network(_ passKit: PKPaymentNetwork) -> PaymentNetwork {
        networks.first { $0.1 == passKit }?.0 ?? PaymentNetwork(rawValue: passKit.rawValue)
    }

    package static func passKitCapabilities(_ capabilities: [MerchantCapability]) -> PKMerchantCapability {
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

    package static func passKitShippingType(_ type: ShippingType) -> PKShippingType {
        switch type {
        case .delivery: .delivery
        case .storePickup: .storePickup
        case .servicePickup: .servicePickup
        default: .shipping
        }
    }

    package static func passKitField(_ field: ContactField) -> PKContactField {
        switch field {
        case .email: .emailAddress
        case .name: .name
        case .phone: .phoneNumber
        case .phoneticName: .phoneticName
        default: .postalAddress
        }
    }

    package static let methodTypes: [(PKPaymentMethodType, PaymentMethodType)] = [
        (.debit, .debit), (.credit, .credit), (.prepaid, .prepaid), (.store, .store), (.eMoney, .eMoney),
    ]

    // MARK: What the sheet gives back

    package static func contact(_ passKit: PKContact) -> Contact {
        var contact = Contact()
        contact.givenName = passKit.name?.givenName
        contact.familyName = passKit.name?.familyName
        contact.phoneticGivenName = passKit.name?.phoneticRepresentation?.givenName
        contact.phoneticFamilyName = passKit.name?.phoneticRepresentation?.familyName
        contact.emailAddress = passKit.emailAddress
        contact.phoneNumber = passKit.phoneNumber?.stringValue
        if let address = passKit.postalAddress {
            // Contacts leaves an unknown field empty; the SDK's contact leaves it nil.
            func given(_ text: String) -> String? { text.isEmpty ? nil : text }
            contact.addressLines = given(address.street)?.components(separatedBy: "\n")
            contact.subLocality = given(address.subLocality)
            contact.locality = given(address.city)
            contact.postalCode = given(address.postalCode)
            contact.subAdministrativeArea = given(address.subAdministrativeArea)
            contact.administrativeArea = given(address.state)
            contact.country = given(address.country)
            contact.countryCode = given(address.isoCountryCode.uppercased())
        }
        return contact
    }

    package static func paymentMethod(_ passKit: PKPaymentMethod) -> PaymentMethod {
        PaymentMethod(
            type: methodTypes.first { $0.0 == passKit.type }?.1 ?? .unknown, network: passKit.network.map(network),
            displayName: passKit.displayName)
    }

    // MARK: Errors and statuses

    package static func passKitErrors(_ errors: [PaymentSheetError]) -> [any Error] { errors.map(passKitError) }

    /// The PassKit error that highlights `error`'s field: a contact field, an address key (street, postal code
    /// …), the whole shipping or billing contact when there is no field, the coupon field, or — for
    /// ``PaymentSheetError/Code/unknown`` only — a general failure.
    package static func passKitError(_ error: PaymentSheetError) -> any Error {
        let message = error.message
        switch error.code {
        case .shippingContactInvalid:
            if let key = error.postalAddressKey, error.contactField == nil || error.contactField == .postalAddress {
                return PKPaymentRequest.paymentShippingAddressInvalidError(withKey: key, localizedDescription: message)
            }
            if let field = error.contactField {
                return PKPaymentRequest.paymentContactInvalidError(
                    withContactField: passKitField(field), localizedDescription: message)
            }
            return PKPaymentError(.shippingContactInvalidError, userInfo: [NSLocalizedDescriptionKey: message])
        case .billingContactInvalid:
            if let key = error.postalAddressKey, error.contactField == nil || error.contactField == .postalAddress {
                return PKPaymentRequest.paymentBillingAddressInvalidError(withKey: key, localizedDescription: message)
            }
            var userInfo: [String: Any] = [NSLocalizedDescriptionKey: message]
            if let field = error.contactField {
                userInfo[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] = passKitField(field).rawValue
            }
            return PKPaymentError(.billingContactInvalidError, userInfo: userInfo)
        case .shippingAddressUnserviceable:
            return PKPaymentRequest.paymentShippingAddressUnserviceableError(withLocalizedDescription: message)
        case .couponCodeInvalid:
            return PKPaymentRequest.paymentCouponCodeInvalidError(localizedDescription: message)
        case .couponCodeExpired:
            return PKPaymentRequest.paymentCouponCodeExpiredError(localizedDescription: message)
        case .unknown:
            return PKPaymentError(.unknownError, userInfo: [NSLocalizedDescriptionKey: message])
        }
    }

    /// PassKit's status for a sheet status.
    package static func passKitStatus(_ status: PaymentSheetStatus) -> PKPaymentAuthorizationStatus {
        status == .success ? .success : .failure
    }
}
