import ApplePayToken
import Foundation
import OrchardCrypto
import Testing

@Suite("DecryptedPaymentData: PAN and cryptogram as SecureBytes")
struct SecureFieldAccessorTests {
    static let samples: [String] = [
        // Apple's field order.
        #"{"applicationPrimaryAccountNumber":"4111111111111111","applicationExpirationDate":"301231","currencyCode":"901","transactionAmount":10000,"deviceManufacturerIdentifier":"040010030273","paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"AOF7d7Jx0OMSAAKPmHr8AoABFA==","eciIndicator":"7"}}"#,
        // Nested objects and arrays before the fields, whitespace, an escaped slash in the cryptogram.
        #"{ "extra": {"paymentData": {"onlinePaymentCryptogram": "decoy"}, "list": [1, "x", {"a": [true, null]}]},"#
            + #" "paymentData" : { "eciIndicator" : "5", "onlinePaymentCryptogram" : "Ab\/cd+ef\u0041==" },"#
            + #" "paymentDataType": "3DSecure", "currencyCode": "840", "transactionAmount": "1",  "#
            + #""applicationExpirationDate": "291130", "applicationPrimaryAccountNumber" : "5454545454545454" }"#,
        // EMV: no cryptogram.
        #"{"applicationPrimaryAccountNumber":"371449635398431","applicationExpirationDate":"301231","currencyCode":"392","transactionAmount":5,"paymentDataType":"EMV","paymentData":{"emvData":"AQID"}}"#,
    ]

    @Test("the byte accessors equal the String accessors", arguments: samples)
    func matchesStrings(_ json: String) throws {
        let data = try DecryptedPaymentData(json: Array(json.utf8))
        #expect(data.primaryAccountNumberBytes.copyBytes() == Array(data.applicationPrimaryAccountNumber.utf8))
        #expect(data.onlinePaymentCryptogramBytes?.copyBytes() == data.onlinePaymentCryptogram.map { Array($0.utf8) })
        if data.paymentDataType == "3DSecure" {
            #expect(data.onlinePaymentCryptogramBytes != nil)
        } else {
            #expect(data.onlinePaymentCryptogramBytes == nil)
        }
    }

    @Test("escapes are decoded; each call gives a fresh buffer; erased data gives nothing")
    func escapesAndErase() throws {
        let data = try DecryptedPaymentData(json: Array(Self.samples[1].utf8))
        #expect(data.onlinePaymentCryptogramBytes?.copyBytes() == Array("Ab/cd+efA==".utf8))
        #expect(data.primaryAccountNumberBytes.copyBytes() == Array("5454545454545454".utf8))
        var first = data.primaryAccountNumberBytes
        first.erase()
        #expect(data.primaryAccountNumberBytes.count == 16)
        data.erase()
        #expect(data.primaryAccountNumberBytes.isEmpty)
        #expect(data.onlinePaymentCryptogramBytes == nil)
    }
}
