import Foundation
import Testing

@testable import Gateway

@Suite("Webhook signatures")
struct WebhooksSignatureTests {
    static let body = Data(#"{"id":"evt_1","type":"payment.succeeded"}"#.utf8)
    static let secret = "whsec_test_secret"
    static let rotated = "whsec_rotated"
    static let timestamp: Int64 = 1_800_000_000
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Values computed independently (Python's hmac module).
    @Test(
        "v1 is the hex HMAC-SHA256 of \"<t>.<body>\" under the secret's UTF-8 bytes",
        arguments: [
            (
                secret, timestamp, body,
                "6ebe12522f52f9540818273cc5ef306b89c6b94b2d00854a07a0519890ee10a7"
            ),
            (
                rotated, timestamp, body,
                "c8bac99bf552c1626c03331496d41e7b902969fb8a22d7db298f32cbb92063bb"
            ),
            ("key", 0, Data(), "85841b4efc3cd7776c3c8f9b7cca9e281c550e5d19889d78e9e669c6337f000d"),
        ])
    func knownAnswers(secret: String, timestamp: Int64, body: Data, expected: String) {
        #expect(WebhookSignature.signature(secret: secret, timestamp: timestamp, body: body) == expected)
    }

    @Test("the header carries t then one v1 per secret during a rotation")
    func headerShape() {
        let header = WebhookSignature.header(
            secrets: [Self.secret, Self.rotated], at: Self.now.addingTimeInterval(0.9), body: Self.body)
        #expect(
            header.description
                == "t=1800000000,v1=6ebe12522f52f9540818273cc5ef306b89c6b94b2d00854a07a0519890ee10a7,"
                + "v1=c8bac99bf552c1626c03331496d41e7b902969fb8a22d7db298f32cbb92063bb")
        #expect(WebhookSignature.headerName == "Orchard-Signature")
    }

    @Test(
        "a header signed with any of the secrets verifies with that secret alone and with the set",
        arguments: [
            ([secret], [secret]), ([secret, rotated], [secret]), ([secret, rotated], [rotated]),
            ([rotated], [secret, rotated]), ([secret], ["whsec_other", secret]),
        ])
    func rotation(signedWith: [String], verifiedWith: [String]) throws {
        let header = WebhookSignature.header(secrets: signedWith, timestamp: Self.timestamp, body: Self.body)
        let parsed = try WebhookSignature.verify(
            header: header.description, body: Self.body, secrets: verifiedWith, now: Self.now)
        #expect(parsed.timestamp == Self.timestamp)
        #expect(parsed.v1.count == signedWith.count)
    }

    @Test(
        "the timestamp must be within the tolerance of now, either way",
        arguments: [
            (-301.0, 300.0, false), (-300.0, 300.0, true), (0.0, 300.0, true), (300.0, 300.0, true),
            (301.0, 300.0, false), (11.0, 10.0, false), (-10.0, 10.0, true), (86_400.0, 300.0, false),
        ])
    func tolerance(offset: TimeInterval, tolerance: TimeInterval, accepted: Bool) {
        let header = WebhookSignature.header(secrets: [Self.secret], timestamp: Self.timestamp, body: Self.body)
        let now = Self.now.addingTimeInterval(offset)
        if accepted {
            #expect(throws: Never.self) {
                try WebhookSignature.verify(
                    header: header.description, body: Self.body, secret: Self.secret, tolerance: tolerance, now: now)
            }
        } else {
            #expect(throws: WebhookSignatureError(code: .timestampOutOfTolerance)) {
                try WebhookSignature.verify(
                    header: header.description, body: Self.body, secret: Self.secret, tolerance: tolerance, now: now)
            }
        }
    }

    enum Tamper: String, CaseIterable, CustomTestStringConvertible {
        case bodyByte, bodyAppended, bodyTruncated, timestamp, signatureDigit, wrongSecret, secretCase, swappedBody
        var testDescription: String { rawValue }
    }

    @Test(
        "any change to the body, the timestamp, the signature or the secret is a mismatch", arguments: Tamper.allCases)
    func tamper(_ tamper: Tamper) {
        var body = Self.body
        var secret = Self.secret
        var header = WebhookSignature.header(secrets: [Self.secret], timestamp: Self.timestamp, body: Self.body)
        switch tamper {
        case .bodyByte: body[body.startIndex + 10] ^= 0x01
        case .bodyAppended: body.append(contentsOf: Array(" ".utf8))
        case .bodyTruncated: body.removeLast()
        case .timestamp: header.timestamp += 1
        case .signatureDigit:
            var digits = Array(header.v1[0])
            digits[5] = digits[5] == "0" ? "1" : "0"
            header.v1[0] = String(digits)
        case .wrongSecret: secret = Self.rotated
        case .secretCase: secret = Self.secret.uppercased()
        case .swappedBody: body = Data(#"{"id":"evt_2","type":"payment.refunded"}"#.utf8)
        }
        #expect(throws: WebhookSignatureError(code: .signatureMismatch)) {
            try WebhookSignature.verify(header: header.description, body: body, secret: secret, now: Self.now)
        }
    }

    static let validHex = "6ebe12522f52f9540818273cc5ef306b89c6b94b2d00854a07a0519890ee10a7"

    @Test(
        "malformed headers are refused with stable codes",
        arguments: [
            ("", "signature_header_missing"),
            ("   ", "signature_header_missing"),
            ("garbage", "signature_header_malformed"),
            ("v1=\(validHex)", "signature_header_malformed"),
            ("t=abc,v1=\(validHex)", "signature_header_malformed"),
            ("t=-5,v1=\(validHex)", "signature_header_malformed"),
            ("t=,v1=\(validHex)", "signature_header_malformed"),
            ("t=1,t=2,v1=\(validHex)", "signature_header_malformed"),
            ("t=1800000000,v1=zz", "signature_header_malformed"),
            ("t=1800000000,v1=\(validHex.dropLast(2))", "signature_header_malformed"),
            ("t=1800000000,v1=\(validHex),", "signature_header_malformed"),
            ("t=1800000000,=x,v1=\(validHex)", "signature_header_malformed"),
            ("t=99999999999999999999,v1=\(validHex)", "signature_header_malformed"),
            (
                "t=1800000000," + String(repeating: "v0=x,", count: 1000) + "v1=\(validHex)",
                "signature_header_malformed"
            ),
            ("t=1800000000", "signature_no_supported_scheme"),
            ("t=1800000000,v0=abc,v2=def", "signature_no_supported_scheme"),
        ])
    func malformed(header: String, code: String) {
        #expect(throws: WebhookSignatureError(code: .init(rawValue: code))) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.now)
        }
    }

    @Test("unknown schemes and whitespace are tolerated; uppercase hex is accepted")
    func tolerantParse() throws {
        let header = " t=1800000000 , v0=legacy,v1=\(Self.validHex.uppercased()) ,v2=future=value "
        let parsed = try WebhookSignatureHeader(parsing: header)
        #expect(parsed.timestamp == 1_800_000_000)
        #expect(parsed.v1 == [Self.validHex])
        #expect(
            parsed.otherItems == [
                WebhookSignatureItem(key: "v0", value: "legacy"),
                WebhookSignatureItem(key: "v2", value: "future=value"),
            ])
        #expect(throws: Never.self) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.now)
        }
        #expect(try WebhookSignatureHeader(parsing: parsed.description) == parsed)
    }

    @Test("no usable secret is its own error, and errors never print the secret")
    func secretMissingAndDescriptions() {
        let header = WebhookSignature.header(secrets: [Self.secret], timestamp: Self.timestamp, body: Self.body)
        #expect(throws: WebhookSignatureError(code: .secretMissing)) {
            try WebhookSignature.verify(header: header.description, body: Self.body, secrets: [], now: Self.now)
        }
        #expect(throws: WebhookSignatureError(code: .secretMissing)) {
            try WebhookSignature.verify(header: header.description, body: Self.body, secret: "", now: Self.now)
        }
        do {
            try WebhookSignature.verify(
                header: header.description, body: Data("x".utf8), secret: Self.secret, now: Self.now)
            Issue.record("a changed body verified")
        } catch {
            #expect(error.code == .signatureMismatch)
            #expect(!error.description.contains(Self.secret))
            #expect(error.description.hasPrefix("signature_mismatch"))
        }
    }

    @Test("errors compare by code only")
    func errorEquality() {
        #expect(
            WebhookSignatureError(code: .signatureMismatch, reason: "a")
                == WebhookSignatureError(code: .signatureMismatch, reason: "b"))
        #expect(WebhookSignatureError(code: .signatureMismatch) != WebhookSignatureError(code: .headerMalformed))
    }
}
