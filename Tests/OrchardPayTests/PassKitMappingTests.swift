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

        @Test("only the unknown code is a general failure")
        func onlyUnknownIsGeneral() {
            for code in PaymentSheetError.Code.allCases {
                let mapped = PassKitMapping.passKitError(Self.sheet(code)) as NSError
                #expect((mapped.code == PKPaymentError.Code.unknownError.rawValue) == (code == .unknown), "\(code)")
            }
        }
    }
#endif
