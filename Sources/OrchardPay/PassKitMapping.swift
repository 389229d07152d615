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

    /// `request` as PassKit's request.
    package static func passKitRequest(_ request: PaymentRequest) -> PKPaymentRequest {
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
    package static func summaryItems(_ request: PaymentRequest) -> [PKPaymentSummaryItem] {
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
