import Foundation
import OrchardJSON
import Testing

@testable import ApplePayToken

@Suite("Token field decoding")
struct ParsingTests {
    @Test(
        "strict base64 decodes what Foundation decodes",
        arguments: [
            "", "AA==", "AAA=", "AAAA", "/+8=", "TWFu", "TWE=", "TQ==", "SGVsbG8sIHdvcmxkIQ==",
            "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
        ])
    func decodesValid(_ text: String) throws {
        let expected = try #require(Data(base64Encoded: text))
        #expect(PaymentToken.decodeBase64(text) == [UInt8](expected))
    }

    @Test(
        "strict base64 refuses anything else",
        arguments: [
            "A", "AA", "AAA", "AAAAA", "A===", "====", "AA=A", "=AAA", "AA AA", "AA\nA", "AAA-", "AAA_", "AA==AAAA",
            "é===", "AAA\u{0}",
        ])
    func refusesInvalid(_ text: String) {
        #expect(PaymentToken.decodeBase64(text) == nil)
    }

    @Test("every length of bytes round-trips through base64", arguments: 0..<64)
    func roundTrips(_ length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7 * length) }
        #expect(PaymentToken.decodeBase64(Data(bytes).base64EncodedString()) == bytes)
    }

    @Test(
        "JSON strings: escapes, non-ASCII and control characters around the 8-byte scan",
        arguments: [
            ("\"abcdefghijklmnop\"", "abcdefghijklmnop"),
            ("\"abcdefgh\\\"ijklmnop\"", "abcdefgh\"ijklmnop"),
            ("\"abcdefghij\\\\klmnop\"", "abcdefghij\\klmnop"),
            ("\"abcdefghijklmnÅpqrstuvwx\"", "abcdefghijklmnÅpqrstuvwx"),
            ("\"ÅÅÅÅÅÅÅÅÅÅ\"", "ÅÅÅÅÅÅÅÅÅÅ"),
            ("\"abcdefgh\\u00e9ijklmnop\"", "abcdefghéijklmnop"),
        ])
    func jsonStrings(_ pair: (String, String)) throws {
        #expect(try JSONValue.parse(Array(pair.0.utf8)) == .string(pair.1))
    }

    @Test("JSON strings refuse control characters and invalid UTF-8 wherever they are", arguments: 0..<20)
    func jsonStringRefusals(_ position: Int) {
        var control = Array("\"abcdefghijklmnopqrst\"".utf8)
        control[1 + position] = 0x01
        #expect(throws: JSONParseError.self) { try JSONValue.parse(control) }
        var invalid = Array("\"abcdefghijklmnopqrst\"".utf8)
        invalid[1 + position] = 0xFF
        #expect(throws: JSONParseError.self) { try JSONValue.parse(invalid) }
    }
}
