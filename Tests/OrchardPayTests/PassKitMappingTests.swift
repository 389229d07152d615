#if !canImport(PassKit)
    import Foundation
    import OrchardPay
    @preconcurrency import PassKitShim
    import Testing

    /// The adapter's translations to PassKit's types, as pure functions (`PassKitMapping`) over PassKitShim.
    @Suite("PassKit mapping")
    struct PassKitMappingTests {
        /// What PassKit's sheet receives for a sheet error: the NSError's code, contact field and address key.
        struct Expected: Sendable, CustomTestStringConvertible {
            var error: PaymentSheetError
            var code: PKPaymentError.Code
            var contactField: PKContactField?
            var postalAddressKey: String?
            var testDescription: String { error.description }
        }

        static func sheet(
            _ code: PaymentSheetError.Code, _ field: ContactField? = nil, _ key: String? = nil
        ) -> PaymentSheetError {
            PaymentSheetError(code, contactField: field, postalAddressKey: key, message: "Fix \(code.rawValue)")
        }

        /// Every code, with and without its fields.
        static let table: [Expected] = [
            Expected(error: sheet(.shippingContactInvalid, .name), code: .shippingContactInvalidError, contactField: .name),
            Expected(
                error: sheet(.shippingContactInvalid, .email), code: .shippingContactInvalidError,
                contactField: .emailAddress),
            Expected(
                error: sheet(.shippingContactInvalid, .phone), code: .shippingContactInvalidError,
                contactField: .phoneNumber),
            Expected(
                error: sheet(.shippingContactInvalid, .phoneticName), code: .shippingContactInvalidError,
                contactField: .phoneticName),
            Expected(
                error: sheet(.shippingContactInvalid, .postalAddress, PostalAddressKey.postalCode),
                code: .shippingContactInvalidError, contactField: .postalAddress, postalAddressKey: CNPostalAddressPostalCodeKey),
            Expected(
                error: sheet(.shippingContactInvalid, nil, PostalAddressKey.street), code: .shippingContactInvalidError,
                contactField: .postalAddress, postalAddressKey: CNPostalAddressStreetKey),
            Expected(
                error: sheet(.shippingContactInvalid, .postalAddress), code: .shippingContactInvalidError,
                contactField: .postalAddress),
            // A contact the merchant refuses as a whole (canAuthorizeWith false): the shipping section.
            Expected(error: sheet(.shippingContactInvalid), code: .shippingContactInvalidError),
            Expected(
                error: sheet(.billingContactInvalid, .postalAddress, PostalAddressKey.city), code: .billingContactInvalidError,
                contactField: .postalAddress, postalAddressKey: CNPostalAddressCityKey),
            Expected(error: sheet(.billingContactInvalid, .name), code: .billingContactInvalidError, contactField: .name),
            Expected(
                error: sheet(.billingContactInvalid, .email), code: .billingContactInvalidError, contactField: .emailAddress),
            Expected(
                error: sheet(.billingContactInvalid, .phone), code: .billingContactInvalidError, contactField: .phoneNumber),
            Expected(error: sheet(.billingContactInvalid), code: .billingContactInvalidError),
            Expected(error: sheet(.shippingAddressUnserviceable), code: .shippingAddressUnserviceableError),
            Expected(error: sheet(.couponCodeInvalid), code: .couponCodeInvalidError),
            Expected(error: sheet(.couponCodeExpired), code: .couponCodeExpiredError),
            Expected(error: sheet(.unknown), code: .unknownError),
        ]

        @Test("every PaymentSheetError code is in the table")
        func tableCoversEveryCode() {
            #expect(Set(Self.table.map(\.error.code)) == Set(PaymentSheetError.Code.allCases))
        }

        @Test("each sheet error becomes the PassKit error that highlights its field", arguments: table)
        func errorMapping(_ expected: Expected) throws {
            let mapped = PassKitMapping.passKitError(expected.error)
            let error = mapped as NSError
            #expect(error.domain == PKPaymentErrorDomain)
            #expect(error.code == expected.code.rawValue)
            #expect(try #require(mapped as? PKPaymentError).code == expected.code)
            #expect(error.userInfo[NSLocalizedDescriptionKey] as? String == expected.error.message)
            #expect(
                error.userInfo[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] as? String
                    == expected.contactField?.rawValue)
            #expect(
                error.userInfo[PKPaymentErrorKey.postalAddressUserInfoKey.rawValue] as? String
                    == expected.postalAddressKey)
        }

        static func twd(_ text: String) -> Money { try! Money(text, currency: .twd) }

        static var contact: Contact {
            var contact = Contact()
            contact.givenName = "Mei"
            contact.familyName = "Lin"
            contact.phoneticGivenName = "メイ"
            contact.emailAddress = "mei@example.com"
            contact.phoneNumber = "+886912345678"
            contact.addressLines = ["No. 7, Section 5", "Xinyi Road"]
            contact.locality = "Taipei"
            contact.postalCode = "110"
            contact.administrativeArea = "Taipei City"
            contact.countryCode = "TW"
            return contact
        }

        /// A subscription with a trial, prefilled contacts, a store pickup, a coupon and shipping methods whose
        /// second is the selected one.
        static var subscription: PaymentRequest {
            var monthly = SummaryItem(label: "Tea club", amount: twd("300.00"))
            monthly.paymentTiming = .recurring
            monthly.recurringPaymentStartDate = "2027-01-01T00:00:00Z"
            monthly.recurringPaymentIntervalUnit = .month
            monthly.recurringPaymentIntervalCount = 1
            monthly.recurringPaymentEndDate = "2027-12-01"
            var trial = SummaryItem(label: "First month", amount: twd("1.00"))
            trial.paymentTiming = .recurring
            trial.recurringPaymentIntervalUnit = .day
            trial.recurringPaymentIntervalCount = 30
            var request = PaymentRequest(
                merchantIdentifier: "merchant.dev.orchard.sandbox", countryCode: .tw, currency: .twd,
                supportedNetworks: [.visa, .jcb, .mir], merchantCapabilities: [.supports3DS, .supportsDebit],
                lineItems: [monthly], total: SummaryItem(label: "Orchard Tea", amount: twd("300.00")),
                shippingMethods: [
                    ShippingMethod(identifier: "store", label: "Store pickup", amount: twd("0.00")),
                    ShippingMethod(identifier: "home", label: "Home", amount: twd("60.00"), selected: true),
                ])
            request.recurringPaymentRequest = RecurringPaymentRequest(
                paymentDescription: "Orchard tea club", regularBilling: monthly, trialBilling: trial,
                billingAgreement: "Cancel any time", managementURL: "https://shop.example/club",
                tokenNotificationURL: "https://shop.example/apple-pay/tokens")
            request.billingContact = contact
            request.shippingContact = contact
            request.shippingContactEditingMode = .storePickup
            request.supportsCouponCode = true
            request.couponCode = "TEA10"
            request.requiredBillingContactFields = [.postalAddress, .name]
            return request
        }

        @Test("everything the model says reaches PKPaymentRequest: recurring, contacts, editing mode, coupon, shipping")
        func subscriptionRequest() throws {
            let passKit = PassKitMapping.passKitRequest(Self.subscription)
            #expect(passKit.supportedNetworks == [.visa, .JCB, PKPaymentNetwork("Mir")])
            #expect(passKit.merchantCapabilities == [.threeDSecure, .debit])
            #expect(passKit.supportsCouponCode)
            #expect(passKit.couponCode == "TEA10")
            #expect(passKit.shippingContactEditingMode == .storePickup)
            #expect(passKit.requiredBillingContactFields == [.postalAddress, .name])
            // The cart's selected shipping method is PassKit's default: the first.
            #expect(passKit.shippingMethods?.map(\.identifier) == ["home", "store"])
            let billing = try #require(passKit.billingContact)
            #expect(billing.name?.givenName == "Mei")
            #expect(billing.name?.phoneticRepresentation?.givenName == "メイ")
            #expect(billing.phoneNumber?.stringValue == "+886912345678")
            #expect(billing.postalAddress?.street == "No. 7, Section 5\nXinyi Road")
            #expect(billing.postalAddress?.city == "Taipei")
            #expect(billing.postalAddress?.state == "Taipei City")
            #expect(billing.postalAddress?.isoCountryCode == "TW")
            #expect(passKit.shippingContact?.emailAddress == "mei@example.com")
            // What PassKit gives back reads as the contact it was given.
            #expect(PassKitMapping.contact(billing) == Self.contact)
            // The line item is PassKit's recurring kind, with its schedule.
            let item = try #require(passKit.paymentSummaryItems.first as? PKRecurringPaymentSummaryItem)
            #expect(item.intervalUnit == .month)
            #expect(item.intervalCount == 1)
            #expect(item.startDate == PaymentRequestValidator.date("2027-01-01T00:00:00Z"))
            #expect(item.endDate == PaymentRequestValidator.date("2027-12-01"))
            #expect(passKit.paymentSummaryItems.last?.label == "Orchard Tea")
            let recurring = try #require(passKit.recurringPaymentRequest)
            #expect(recurring.paymentDescription == "Orchard tea club")
            #expect(recurring.regularBilling.amount == NSDecimalNumber(string: "300.00"))
            #expect(recurring.trialBilling?.intervalUnit == .day)
            #expect(recurring.trialBilling?.intervalCount == 30)
            #expect(recurring.billingAgreement == "Cancel any time")
            #expect(recurring.managementURL == URL(string: "https://shop.example/club"))
            #expect(recurring.tokenNotificationURL == URL(string: "https://shop.example/apple-pay/tokens"))
            #expect(passKit.automaticReloadPaymentRequest == nil)
            #expect(passKit.deferredPaymentRequest == nil)
            #expect(passKit.multiTokenContexts.isEmpty)
            #expect(PassKitMapping.unsupportedFeatures(Self.subscription) == [])
        }

        @Test("automatic reload, deferred and multi-token requests reach PKPaymentRequest")
        func reloadDeferredAndMultiToken() throws {
            var reloadBilling = SummaryItem(label: "Top up", amount: Self.twd("500.00"))
            reloadBilling.automaticReloadPaymentThresholdAmount = Self.twd("100.00")
            var stay = SummaryItem(label: "Hotel", amount: Self.twd("3200.00"))
            stay.deferredPaymentDate = "2027-02-14T15:00:00Z"
            var request = PaymentRequest(
                merchantIdentifier: "merchant.dev.orchard.sandbox", countryCode: .tw, currency: .twd,
                supportedNetworks: [.visa], total: SummaryItem(label: "Orchard Travel", amount: Self.twd("3700.00")))
            request.automaticReloadPaymentRequest = AutomaticReloadPaymentRequest(
                paymentDescription: "Travel card", automaticReloadBilling: reloadBilling,
                managementURL: "https://shop.example/card")
            request.deferredPaymentRequest = DeferredPaymentRequest(
                paymentDescription: "Hotel stay", deferredBilling: stay, billingAgreement: "Charged at check-in",
                managementURL: "https://shop.example/stay", freeCancellationDate: "2027-02-10T00:00:00Z",
                freeCancellationDateTimeZone: "Asia/Taipei")
            request.multiTokenContexts = [
                MultiTokenContext(
                    merchantIdentifier: "merchant.example.hotel", externalIdentifier: "hotel-1", merchantName: "Hotel",
                    merchantDomain: "hotel.example", amount: Self.twd("3200.00")),
                MultiTokenContext(
                    merchantIdentifier: "merchant.example.card", externalIdentifier: "card-1", merchantName: "Card",
                    amount: Self.twd("500.00")),
            ]
            let passKit = PassKitMapping.passKitRequest(request)
            let reload = try #require(passKit.automaticReloadPaymentRequest)
            #expect(reload.automaticReloadBilling.thresholdAmount == NSDecimalNumber(string: "100.00"))
            #expect(reload.automaticReloadBilling.amount == NSDecimalNumber(string: "500.00"))
            #expect(reload.managementURL == URL(string: "https://shop.example/card"))
            let deferred = try #require(passKit.deferredPaymentRequest)
            #expect(deferred.deferredBilling.deferredDate == PaymentRequestValidator.date("2027-02-14T15:00:00Z"))
            #expect(deferred.billingAgreement == "Charged at check-in")
            #expect(deferred.freeCancellationDate == PaymentRequestValidator.date("2027-02-10T00:00:00Z"))
            #expect(deferred.freeCancellationDateTimeZone == TimeZone(identifier: "Asia/Taipei"))
            #expect(passKit.multiTokenContexts.map(\.externalIdentifier) == ["hotel-1", "card-1"])
            #expect(passKit.multiTokenContexts.first?.merchantDomain == "hotel.example")
            #expect(passKit.multiTokenContexts.last?.amount == NSDecimalNumber(string: "500.00"))
            #expect(passKit.supportsCouponCode == false)
            #expect(passKit.couponCode == nil)
        }

        @Test("only the unknown code is a general failure")
        func onlyUnknownIsGeneral() {
            for code in PaymentSheetError.Code.allCases {
                let mapped = PassKitMapping.passKitError(Self.sheet(code)) as NSError
                #expect((mapped.code == PKPaymentError.Code.unknownError.rawValue) == (code == .unknown), "\(code)")
            }
        }
    }
#endif
