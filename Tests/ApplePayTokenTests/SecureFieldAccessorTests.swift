import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardJSON
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

    @Test("the secret fields hold what a JSON parse of the plaintext reads", arguments: samples)
    func matchesAParse(_ json: String) throws {
        let data = try DecryptedPaymentData(json: Array(json.utf8))
        let parsed = try JSONValue.parse(Array(json.utf8))
        #expect(data.primaryAccountNumberBytes.copyBytes() == parsed["applicationPrimaryAccountNumber"]?.string.map { Array($0.utf8) })
        let details = parsed["paymentData"]
        #expect(data.onlinePaymentCryptogramBytes?.copyBytes() == details?["onlinePaymentCryptogram"]?.string.map { Array($0.utf8) })
        #expect(data.emvDataBytes?.copyBytes() == details?["emvData"]?.string.map { Array($0.utf8) })
        #expect(data.eciIndicator == details?["eciIndicator"]?.string)
        #expect(data.currencyCode == parsed["currencyCode"]?.string)
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

    @Test("erase zeros the plaintext and every secret buffer in place", arguments: samples)
    func eraseZerosTheBuffers(_ json: String) throws {
        let data = try DecryptedPaymentData(json: Array(json.utf8))
        let allocations = data.secretAllocations
        // The plaintext and the PAN, and the cryptogram or the EMV data.
        #expect(allocations.count >= 3)
        for allocation in allocations { #expect(allocation.contains { $0 != 0 }) }
        data.erase()
        for allocation in allocations { #expect(allocation.allSatisfy { $0 == 0 }) }
        #expect(data.isErased)
    }

    @Test("a plaintext refused after the secrets were read leaves none behind: they are zeroed before the error")
    func refusedPlaintextIsZeroed() throws {
        // A PAN and a cryptogram, then a transactionAmount that is not an integer.
        let json = #"{"applicationPrimaryAccountNumber":"4111111111111111","applicationExpirationDate":"301231","currencyCode":"901","transactionAmount":"1.5","paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"AOF7d7Jx0OMSAAKPmHr8AoABFA=="}}"#
        #expect(throws: PaymentTokenError(.decryptionFailed)) { try DecryptedPaymentData(json: Array(json.utf8)) }
    }

    @Test("a secret that is not printable ASCII is refused, and the parse never decodes it")
    func secretsAreASCII() throws {
        let json = #"{"applicationPrimaryAccountNumber":"4111\u00e91111111111","applicationExpirationDate":"301231","currencyCode":"901","transactionAmount":1,"paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"AQID"}}"#
        #expect(throws: PaymentTokenError(.decryptionFailed)) { try DecryptedPaymentData(json: Array(json.utf8)) }
        let raw = json.replacingOccurrences(of: #"\u00e9"#, with: "\u{e9}")
        #expect(raw != json)
        #expect(throws: PaymentTokenError(.decryptionFailed)) { try DecryptedPaymentData(json: Array(raw.utf8)) }
        let opaque = try JSONValue.parse(Array(#"{"secret":"a\u0041b","other":"x"}"#.utf8), opaqueKeys: ["secret"])
        #expect(opaque["secret"] == .string(""))
        #expect(opaque["other"] == .string("x"))
        #expect(opaque.members?.first?.valueRange == 10..<20)
    }

    @Test("no String and no Data is made of the PAN or the cryptogram anywhere in Sources")
    func noStringOfTheSecrets() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        // A String or Data initializer whose argument names a PAN or cryptogram holder, or a String-typed one.
        let conversion = try Regex(
            #"\b(String|Data)\((decoding: *|describing: *)?[^)]*(accountNumber|AccountNumber|cryptogram|Cryptogram)"#)
        let stringField = try Regex(
            #"(var|let) +(applicationPrimaryAccountNumber|onlinePaymentCryptogram|accountNumber|cryptogram): *String"#)
        var found: [String] = []
        // ApplePaySandbox mints test tokens: its inputs are the sandbox's own test card numbers and cryptograms.
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" && !file.path.contains("/Sources/ApplePaySandbox/") {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && (line.contains(conversion) || line.contains(stringField))
            {
                found.append("\(file.lastPathComponent):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found == [])
        // The check itself finds what it looks for.
        #expect("String(decoding: data.primaryAccountNumberBytes.copyBytes(), as: UTF8.self)".contains(conversion))
        #expect("public var onlinePaymentCryptogram: String?".contains(stringField))
    }
}
