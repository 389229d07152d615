import ApplePaySandbox
import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto
import OrchardJSON
import Testing

@Suite("Minted tokens: round trips")
struct RoundTripTests {
    let fixture = SandboxFixture.shared

    @Test("a token read from the caller's parse equals one parsed from its text, and is held to the same bounds")
    func fromTheCallersParse() throws {
        let json = try TokenMinter(pki: fixture.pki).mint(fixture.request())
        let fromParse = try PaymentToken(parsed: try JSONValue.parse(json), byteCount: json.count)
        let fromText = try PaymentToken(json: json)
        #expect(fromParse.transactionId == fromText.transactionId)
        #expect(fromParse.ciphertext == fromText.ciphertext)
        #expect(fromParse.signature == fromText.signature)
        #expect(fromParse.keyMaterial == fromText.keyMaterial)
        #expect(fromParse.paymentMethod == fromText.paymentMethod)
        _ = try fixture.decryptor.decrypt(fromParse, at: SandboxFixture.now).erase()
        // Nine levels, a 65-digit number, and a text too long: each refused both ways.
        let nested = Data(#"{"paymentData":{"a":[[[[[[[[1]]]]]]]]}}"#.utf8)
        let long = Data(("{\"paymentData\":{\"a\":" + String(repeating: "1", count: 65) + "}}").utf8)
        for text in [nested, long] {
            #expect(throws: PaymentTokenError(.malformedToken)) { try PaymentToken(json: text) }
            #expect(throws: PaymentTokenError(.malformedToken)) {
                try PaymentToken(parsed: try JSONValue.parse(text), byteCount: text.count)
            }
        }
        #expect(throws: PaymentTokenError(.malformedToken)) {
            try PaymentToken(parsed: try JSONValue.parse(json), byteCount: PaymentToken.maximumSize + 1)
        }
    }

    @Test(
        "EC_v1 and RSA_v1, with and without applicationData, decrypt to what was minted",
        arguments: [PaymentTokenVersion.ecV1, .rsaV1],
        [nil, "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"])
    func roundTrip(version: PaymentTokenVersion, applicationData: String?) throws {
        var request = fixture.request(version)
        request.applicationData = applicationData
        request.pan = "4111111111111111"
        request.amount = 123_456
        request.currencyCode = "901"
        request.cryptogram = "AQIDBAUGBwgJCgsMDQ4PEBESExQ="
        request.eci = "05"
        request.cardholderName = "Lin Mei"
        request.transactionIdentifier = "00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF00FF"
        let token = try fixture.mint(request)
        #expect(token.version == version)
        #expect(token.applicationData == applicationData)
        #expect(token.transactionIdentifier == request.transactionIdentifier)
        #expect(token.transactionId == request.transactionIdentifier!.lowercased())
        #expect(token.paymentMethod == PaymentMethodInfo(displayName: "Visa 1111", network: "Visa", type: "debit"))
        let verification = try fixture.decryptor.verify(token, at: SandboxFixture.now)
        #expect(verification.signingTime == SandboxFixture.now)
        #expect(verification.signerSubject.contains("orchard-sandbox-smp-broker-sign"))
        let payment = try fixture.decryptor.decrypt(token, at: SandboxFixture.now)
        #expect(payment.primaryAccountNumberBytes == SecureBytes("4111111111111111".utf8))
        #expect(payment.maskedPAN == "411111******1111")
        #expect(payment.bin == "411111")
        #expect(payment.lastFour == "1111")
        #expect(payment.applicationExpirationDate == "291231")
        #expect(payment.transactionAmount == 123_456)
        #expect(payment.currencyCode == "901")
        #expect(payment.onlinePaymentCryptogramBytes == SecureBytes("AQIDBAUGBwgJCgsMDQ4PEBESExQ=".utf8))
        #expect(payment.eciIndicator == "05")
        #expect(payment.cardholderName == "Lin Mei")
        #expect(payment.paymentDataType == "3DSecure")
        #expect(payment.deviceManufacturerIdentifier == "040010030273")
    }

    @Test(
        "a minted token's SignerInfo verifies on its own once the certificates are split off",
        arguments: [PaymentTokenVersion.ecV1, .rsaV1])
    func splitSignerInfo(version: PaymentTokenVersion) throws {
        let token = try fixture.mint(fixture.request(version))
        let split = try #require(SignedDataSplitter.split(token.signature))
        #expect(split.certificates.first == 0xA0)
        // The definite-length reader and the generic one cut the same bytes.
        let definite = try #require(SignedDataSplitter.splitDefinite(token.signature))
        let generic = try #require(SignedDataSplitter.splitGeneric(token.signature))
        #expect(definite.certificates == generic.certificates)
        #expect(definite.withoutCertificates == generic.withoutCertificates)
        let stripped = try CMSSignedData(der: split.withoutCertificates, context: nil)
        #expect(stripped.certificates.isEmpty)
        var content = token.signedContent
        #expect(
            PaymentTokenDecryptor.cmsVerify(
                stripped, signerInfo: try #require(stripped.onlySignerInfo), signer: fixture.pki.leaf, content: &content
            ))
        // The signer identifier comes off too: it is the leaf's IssuerAndSerialNumber, and the rest verifies
        // with the placeholder in its place.
        let detached = try #require(SignedDataSplitter.detachSignerIdentifier(split.withoutCertificates))
        #expect(detached.signerIdentifier == SignedDataSplitter.issuerAndSerialNumber(of: fixture.pki.leaf))
        #expect(detached.rest.count < split.withoutCertificates.count)
        let withoutSigner = try CMSSignedData(der: detached.rest, context: nil)
        let signerInfo = try #require(withoutSigner.onlySignerInfo)
        #expect(CMS_SignerInfo_cert_cmp(signerInfo, fixture.pki.leaf.pointer) != 0)
        #expect(
            PaymentTokenDecryptor.cmsVerify(
                withoutSigner, signerInfo: signerInfo, signer: fixture.pki.leaf, content: &content))
        // Not a ContentInfo with one SignerInfo: nothing to detach.
        #expect(SignedDataSplitter.detachSignerIdentifier(Array(split.withoutCertificates.dropLast())) == nil)
        #expect(SignedDataSplitter.detachSignerIdentifier([0x30, 0x00]) == nil)
    }

    @Test("applicationData is signed: changing or dropping it breaks the signature")
    func applicationDataIsSigned() throws {
        var request = fixture.request()
        request.applicationData = "00112233"
        #expect(try fixture.mint(request).applicationData == "00112233")
        let changed = try PaymentToken(json: reencode(token: request, replacing: "00112233", with: "00112234"))
        #expect(throws: PaymentTokenError(.signatureInvalid)) {
            try fixture.decryptor.verify(changed, at: SandboxFixture.now)
        }
    }

    private func reencode(token request: MintRequest, replacing: String, with replacement: String) throws -> Data {
        let json = String(decoding: try TokenMinter(pki: fixture.pki).mint(request), as: UTF8.self)
        return Data(json.replacingOccurrences(of: replacing, with: replacement).utf8)
    }

    @Test("a shared secret with a leading zero byte keeps all 32 bytes")
    func leadingZero() throws {
        var request = fixture.request()
        request.forceLeadingZeroSharedSecret = true
        let token = try fixture.mint(request)
        let payment = try fixture.decryptor.decrypt(token, at: SandboxFixture.now)
        #expect(payment.primaryAccountNumberBytes == SecureBytes(request.pan.utf8))
    }

    @Test("key rotation: tokens for the old and the new certificate both decrypt with the key ring")
    func rotation() throws {
        let decryptor = PaymentTokenDecryptor(
            trustAnchor: fixture.pki.trustAnchor, keys: [fixture.rotatedMerchantKey, fixture.ecMerchantKey])
        let old = try fixture.mint(fixture.request())
        var newRequest = fixture.request()
        newRequest.merchantCertificatePEM = fixture.rotatedCertificatePEM
        let new = try fixture.mint(newRequest)
        #expect(old.publicKeyHash != new.publicKeyHash)
        #expect(try decryptor.decrypt(old, at: SandboxFixture.now).lastFour == "0492")
        #expect(try decryptor.decrypt(new, at: SandboxFixture.now).lastFour == "0492")
        let onlyNew = PaymentTokenDecryptor(trustAnchor: fixture.pki.trustAnchor, keys: [fixture.rotatedMerchantKey])
        #expect(throws: PaymentTokenError(.unknownMerchantKey)) { try onlyNew.decrypt(old, at: SandboxFixture.now) }
    }

    @Test("a key given with its merchant identifier instead of a certificate decrypts")
    func merchantIdentifierKey() throws {
        let key = try MerchantKey(
            privateKeyPEM: try fixture.ecKey.privateKeyPEM(), merchantIdentifier: SandboxFixture.merchantID)
        #expect(key.merchantIdentifierHash == fixture.ecMerchantKey.merchantIdentifierHash)
        #expect(
            try X509Certificate(pem: fixture.ecCertificatePEM).applePayMerchantIdentifierHash
                == key.merchantIdentifierHash)
        #expect(key.publicKeyHash == fixture.ecMerchantKey.publicKeyHash)
        let wrongID = try MerchantKey(
            privateKeyPEM: try fixture.ecKey.privateKeyPEM(), merchantIdentifier: "merchant.other")
        let token = try fixture.mint(fixture.request())
        let decryptor = PaymentTokenDecryptor(trustAnchor: fixture.pki.trustAnchor, keys: [key])
        #expect(try decryptor.decrypt(token, at: SandboxFixture.now).transactionAmount == 100)
        let wrong = PaymentTokenDecryptor(trustAnchor: fixture.pki.trustAnchor, keys: [wrongID])
        #expect(throws: PaymentTokenError(.decryptionFailed)) { try wrong.decrypt(token, at: SandboxFixture.now) }
    }

    @Test("EMV payment data and unknown fields come through; the masked JSON hides PAN and cryptograms")
    func emvAndExtraFields() throws {
        var request = fixture.request()
        request.emvData = "ZW12LWRhdGE="
        request.encryptedPINData = "ABCDEF"
        request.extraFields = ["merchantTokenIdentifier": "DNITHE000000000000000001"]
        let payment = try fixture.decryptor.decrypt(try fixture.mint(request), at: SandboxFixture.now)
        #expect(payment.paymentDataType == "EMV")
        #expect(payment.emvDataBytes == SecureBytes("ZW12LWRhdGE=".utf8))
        #expect(payment.encryptedPINDataBytes == SecureBytes("ABCDEF".utf8))
        #expect(payment.onlinePaymentCryptogramBytes == nil)
        let revealed = String(decoding: payment.json(revealing: true), as: UTF8.self)
        #expect(revealed.contains("DNITHE000000000000000001"))
        #expect(revealed.contains(MintRequest.sandboxVisaPAN))
        let masked = String(decoding: payment.json(revealing: false), as: UTF8.self)
        #expect(masked.contains("DNITHE000000000000000001"))
        #expect(masked.contains("476112******0492"))
        #expect(!masked.contains(MintRequest.sandboxVisaPAN))
        #expect(!masked.contains("ZW12LWRhdGE="))
        #expect(!masked.contains("ABCDEF"))
    }

    @Test("descriptions, debug descriptions and dumps never show the PAN or the cryptogram; erase empties it")
    func noLeaks() throws {
        var request = fixture.request()
        request.cryptogram = "U0VDUkVUQ1JZUFRPR1JBTQ=="
        let payment = try fixture.decryptor.decrypt(try fixture.mint(request), at: SandboxFixture.now)
        var dumped = ""
        dump(payment, to: &dumped)
        for text in [payment.description, payment.debugDescription, dumped, "\(payment)", String(reflecting: payment)] {
            #expect(!text.contains(MintRequest.sandboxVisaPAN))
            #expect(!text.contains("U0VDUkVUQ1JZUFRPR1JBTQ=="))
        }
        #expect(payment.description.contains("476112******0492"))
        #expect(!String(decoding: payment.json(revealing: false), as: UTF8.self).contains("U0VDUkVUQ1JZUFRPR1JBTQ=="))
        payment.erase()
        #expect(payment.isErased)
        #expect(payment.primaryAccountNumberBytes.isEmpty)
        #expect(payment.onlinePaymentCryptogramBytes == nil)
    }

    @Test(
        "the signing-time window is inclusive at its edges",
        arguments: [(-300.0, true), (-301.0, false), (60.0, true), (61.0, false)])
    func windowEdges(offset: TimeInterval, accepted: Bool) throws {
        let token = try fixture.mint(fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(offset)))
        if accepted {
            #expect(throws: Never.self) { try fixture.decryptor.verify(token, at: SandboxFixture.now) }
        } else {
            #expect(throws: PaymentTokenError(.signingTimeOutOfWindow)) {
                try fixture.decryptor.verify(token, at: SandboxFixture.now)
            }
        }
    }

    @Test("one decryptor serves many threads at once (shared caches and ECDH pools)")
    func concurrentUse() throws {
        let decryptor = fixture.decryptor
        let tokens = try (0..<16).map { index in
            var request = fixture.request(index % 4 == 3 ? .rsaV1 : .ecV1)
            request.amount = Int64(1000 + index)
            return try fixture.mint(request)
        }
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 128) { iteration in
            let token = tokens[iteration % tokens.count]
            do {
                let payment = try decryptor.decrypt(token, at: SandboxFixture.now)
                if payment.transactionAmount != Int64(1000 + iteration % tokens.count) { failures.add() }
                payment.erase()
            } catch {
                failures.add()
            }
        }
        #expect(failures.value == 0)
    }

    @Test("the token may be given as paymentData alone")
    func paymentDataAlone() throws {
        let json = try TokenMinter(pki: fixture.pki).mint(fixture.request())
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let paymentData = try JSONSerialization.data(withJSONObject: object["paymentData"]!)
        let token = try PaymentToken(json: paymentData)
        #expect(token.transactionIdentifier == nil)
        #expect(token.paymentMethod == nil)
        #expect(try fixture.decryptor.decrypt(token, at: SandboxFixture.now).lastFour == "0492")
    }
}

@Suite("Minted tokens: every rejection")
struct RejectionTests {
    let fixture = SandboxFixture.shared

    func expectRejection(
        _ code: PaymentTokenError.Code, _ token: PaymentToken, decryptor: PaymentTokenDecryptor? = nil,
        at now: Date = SandboxFixture.now, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: PaymentTokenError.self, sourceLocation: sourceLocation) {
            try (decryptor ?? fixture.decryptor).decrypt(token, at: now)
        }
        #expect(error?.code == code, "\(error.map { "\($0)" } ?? "no error")", sourceLocation: sourceLocation)
    }

    func mintText(_ request: MintRequest) throws -> String {
        String(decoding: try TokenMinter(pki: fixture.pki).mint(request), as: UTF8.self)
    }

    @Test("malformed_token: not JSON, wrong shapes, bad base64 or hex, missing fields, oversize, truncated CMS")
    func malformed() throws {
        let good = try mintText(fixture.request())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(good.utf8)) as? [String: Any])
        let paymentData = try #require(object["paymentData"] as? [String: Any])
        let header = try #require(paymentData["header"] as? [String: Any])
        func variant(_ change: (inout [String: Any], inout [String: Any]) -> Void) throws -> Data {
            var data = paymentData
            var head = header
            change(&data, &head)
            if data["header"] != nil { data["header"] = head }
            return try JSONSerialization.data(withJSONObject: ["paymentData": data])
        }
        let signature = try #require(Data(base64Encoded: paymentData["signature"] as! String))
        let cases: [Data] = [
            Data("not json".utf8), Data("[]".utf8), Data("{}".utf8), Data("{\"paymentData\": 5}".utf8),
            Data(good.utf8).prefix(200),
            Data(repeating: 0x20, count: PaymentToken.maximumSize + 1),
            try variant { data, _ in data["data"] = "%%%not base64%%%" },
            try variant { data, _ in data["data"] = "" },
            try variant { data, _ in data["signature"] = 12 },
            try variant { data, _ in data["signature"] = signature.prefix(signature.count / 2).base64EncodedString() },
            try variant { data, _ in data["signature"] = Data([0x30, 0x03, 0x02, 0x01]).base64EncodedString() },
            try variant { _, head in head["transactionId"] = "xyz" },
            try variant { _, head in head["publicKeyHash"] = "AAAA" },
            try variant { _, head in head.removeValue(forKey: "ephemeralPublicKey") },
            try variant { _, head in head["applicationData"] = "abc" },
            try variant { data, _ in data.removeValue(forKey: "header") },
            try variant { data, _ in data["data"] = String(repeating: "A", count: 70_000) },
        ]
        for (index, json) in cases.enumerated() {
            let error = #expect(throws: PaymentTokenError.self, "case \(index)") {
                let token = try PaymentToken(json: json)
                _ = try fixture.decryptor.decrypt(token, at: SandboxFixture.now)
            }
            #expect(error?.code == .malformedToken, "case \(index): \(error.map { "\($0)" } ?? "")")
        }
    }

    @Test("unsupported_version")
    func unsupportedVersion() throws {
        let json = try mintText(fixture.request()).replacingOccurrences(of: "\"EC_v1\"", with: "\"EC_v2\"")
        #expect(throws: PaymentTokenError(.unsupportedVersion)) { try PaymentToken(json: Data(json.utf8)) }
    }

    @Test("signature_invalid: a ciphertext byte flipped after signing")
    func flippedAfterSigning() throws {
        var request = fixture.request()
        request.tamper = .flipCiphertextAfterSigning
        expectRejection(.signatureInvalid, try fixture.mint(request))
    }

    @Test("signature_invalid: the signer-swap attack (a valid leaf next to a foreign signer)")
    func signerSwap() throws {
        var request = fixture.request()
        request.tamper = .foreignSigner
        expectRejection(.signatureInvalid, try fixture.mint(request))
    }

    @Test("signature_invalid: a SignerInfo naming another certificate, with the chain cached and without")
    func signerIdentifierOfAnotherCertificate() throws {
        let decryptor = fixture.decryptor
        _ = try decryptor.decrypt(try fixture.mint(fixture.request()), at: SandboxFixture.now)
        #expect(decryptor.cachedCertificateSets == 1)
        var token = try fixture.mint(fixture.request())
        // The serial number's last byte, which the signature does not cover: only the signer check catches it.
        let signerIdentifier = try #require(
            SignedDataSplitter.detachSignerIdentifier(token.signature)?.signerIdentifier)
        let range = try #require(token.signature.firstRange(of: signerIdentifier))
        token.signature[range.upperBound - 1] ^= 0x01
        expectRejection(.signatureInvalid, token, decryptor: decryptor)
        expectRejection(.signatureInvalid, token)
    }

    @Test("signature_invalid: a token signed for another transaction id")
    func transactionIdIsSigned() throws {
        var request = fixture.request()
        request.transactionIdentifier = "aa"
        let json = try mintText(request).replacingOccurrences(
            of: "\"transactionId\":\"aa\"", with: "\"transactionId\":\"ab\"")
        expectRejection(.signatureInvalid, try PaymentToken(json: Data(json.utf8)))
    }

    @Test("certificate_untrusted: a foreign root")
    func foreignRoot() throws {
        let other = try SandboxPKI.generate(
            notBefore: SandboxFixture.now.addingTimeInterval(-86400),
            notAfter: SandboxFixture.now.addingTimeInterval(86400))
        let decryptor = PaymentTokenDecryptor(trustAnchor: other.trustAnchor, keys: [fixture.ecMerchantKey])
        expectRejection(.certificateUntrusted, try fixture.mint(fixture.request()), decryptor: decryptor)
        // And tokens of the foreign PKI are refused by ours.
        expectRejection(.certificateUntrusted, try fixture.mint(fixture.request(), pki: other))
    }

    @Test("certificate_untrusted: a leaf or an intermediate without its marker extension", arguments: [true, false])
    func missingMarker(leafMarker: Bool) throws {
        var options = SandboxPKI.Options()
        options.leafMarker = leafMarker
        options.intermediateMarker = !leafMarker
        let pki = try SandboxPKI.generate(
            notBefore: SandboxFixture.now.addingTimeInterval(-86400),
            notAfter: SandboxFixture.now.addingTimeInterval(86400),
            options: options)
        let decryptor = PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [fixture.ecMerchantKey])
        expectRejection(.certificateUntrusted, try fixture.mint(fixture.request(), pki: pki), decryptor: decryptor)
    }

    @Test("certificate_untrusted: an expired leaf, also when the chain was cached while it was valid")
    func expiredLeaf() throws {
        var options = SandboxPKI.Options()
        options.leafValidity = SandboxFixture.now.addingTimeInterval(-86400)...SandboxFixture.now.addingTimeInterval(60)
        let pki = try SandboxPKI.generate(
            notBefore: SandboxFixture.now.addingTimeInterval(-10 * 86400),
            notAfter: SandboxFixture.now.addingTimeInterval(10 * 86400), options: options)
        let decryptor = PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [fixture.ecMerchantKey])
        let later = SandboxFixture.now.addingTimeInterval(3600)
        // Fresh decryptor, nothing cached: rejected.
        expectRejection(
            .certificateUntrusted, try fixture.mint(fixture.request(signedAt: later), pki: pki), decryptor: decryptor,
            at: later)
        // Cache the chain with a valid token, then present the same chain at a later signing time.
        let cached = PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [fixture.ecMerchantKey])
        #expect(throws: Never.self) {
            try cached.decrypt(try fixture.mint(fixture.request(), pki: pki), at: SandboxFixture.now)
        }
        expectRejection(
            .certificateUntrusted, try fixture.mint(fixture.request(signedAt: later), pki: pki), decryptor: cached,
            at: later)
    }

    @Test("signing_time_out_of_window: too old and in the future")
    func window() throws {
        expectRejection(
            .signingTimeOutOfWindow,
            try fixture.mint(fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(-3600))))
        expectRejection(
            .signingTimeOutOfWindow,
            try fixture.mint(fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(120))))
        let wide = PaymentTokenDecryptor(
            trustAnchor: fixture.pki.trustAnchor, keys: [fixture.ecMerchantKey],
            window: SigningTimeWindow(maximumAge: 7200, maximumFutureSkew: 300))
        #expect(throws: Never.self) {
            try wide.decrypt(
                try fixture.mint(fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(-3600))),
                at: SandboxFixture.now)
        }
    }

    @Test("a decryptor that has cached the certificates still rejects every defect")
    func warmCache() throws {
        let decryptor = fixture.decryptor
        #expect(throws: Never.self) {
            try decryptor.decrypt(try fixture.mint(fixture.request()), at: SandboxFixture.now)
        }
        var flipped = fixture.request()
        flipped.tamper = .flipCiphertextAfterSigning
        expectRejection(.signatureInvalid, try fixture.mint(flipped), decryptor: decryptor)
        var foreign = fixture.request()
        foreign.tamper = .foreignSigner
        expectRejection(.signatureInvalid, try fixture.mint(foreign), decryptor: decryptor)
        var tag = fixture.request()
        tag.tamper = .flipCiphertextBeforeSigning(byteFromEnd: 0)
        expectRejection(.decryptionFailed, try fixture.mint(tag), decryptor: decryptor)
        expectRejection(
            .signingTimeOutOfWindow,
            try fixture.mint(fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(-900))),
            decryptor: decryptor)
        var request = fixture.request()
        request.transactionIdentifier = "aa"
        let json = try mintText(request).replacingOccurrences(
            of: "\"transactionId\":\"aa\"", with: "\"transactionId\":\"ab\"")
        expectRejection(.signatureInvalid, try PaymentToken(json: Data(json.utf8)), decryptor: decryptor)
        // A signature whose ECDSA value is damaged (its last byte) fails too.
        let valid = try mintText(fixture.request())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(valid.utf8)) as? [String: Any])
        var paymentData = try #require(object["paymentData"] as? [String: Any])
        var signature = [UInt8](try #require(Data(base64Encoded: paymentData["signature"] as! String)))
        signature[signature.count - 1] ^= 0x01
        paymentData["signature"] = Data(signature).base64EncodedString()
        let damaged = try JSONSerialization.data(withJSONObject: ["paymentData": paymentData])
        expectRejection(.signatureInvalid, try PaymentToken(json: damaged), decryptor: decryptor)
    }

    @Test("unknown_merchant_key")
    func unknownKey() throws {
        let decryptor = PaymentTokenDecryptor(trustAnchor: fixture.pki.trustAnchor, keys: [fixture.rotatedMerchantKey])
        expectRejection(.unknownMerchantKey, try fixture.mint(fixture.request()), decryptor: decryptor)
        // Verification alone needs no key.
        #expect(throws: Never.self) {
            try decryptor.verify(try fixture.mint(fixture.request()), at: SandboxFixture.now)
        }
    }

    @Test("decryption_failed: a flipped tag or ciphertext byte re-signed by the valid leaf", arguments: [0, 5, 16, 40])
    func flippedBeforeSigning(byteFromEnd: Int) throws {
        for version in [PaymentTokenVersion.ecV1, .rsaV1] {
            var request = fixture.request(version)
            request.tamper = .flipCiphertextBeforeSigning(byteFromEnd: byteFromEnd)
            let token = try fixture.mint(request)
            #expect(throws: Never.self) { try fixture.decryptor.verify(token, at: SandboxFixture.now) }
            expectRejection(.decryptionFailed, token)
        }
    }

    @Test("decryption_failed: an off-curve ephemeral key, signed")
    func offCurve() throws {
        var request = fixture.request()
        request.tamper = .offCurveEphemeralKey
        expectRejection(.decryptionFailed, try fixture.mint(request))
    }

    @Test(
        "decryption_failed: plaintext that is not Apple's payment data, encrypted properly",
        arguments: [
            "not json at all", "[1,2,3]", "{}", "{\"applicationPrimaryAccountNumber\":\"4111\"}",
            "{\"applicationPrimaryAccountNumber\":\"4111111111111111\",\"applicationExpirationDate\":\"291231\",\"currencyCode\":\"901\",\"transactionAmount\":-5,\"paymentDataType\":\"3DSecure\",\"paymentData\":{\"onlinePaymentCryptogram\":\"x\"}}",
            "{\"a\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
        ])
    func badPlaintext(_ plaintext: String) throws {
        var request = fixture.request()
        request.plaintextOverride = Array(plaintext.utf8)
        expectRejection(.decryptionFailed, try fixture.mint(request))
    }

    @Test("decryption_failed: an RSA token for an EC key with the same hash cannot happen; a wrong-type key is refused")
    func wrongKeyType() throws {
        // An RSA_v1 token whose header names the EC key.
        let rsa = try mintText(fixture.request(.rsaV1))
        let json = rsa.replacingOccurrences(
            of: fixture.rsaMerchantKey.publicKeyHash, with: fixture.ecMerchantKey.publicKeyHash)
        let token = try PaymentToken(json: Data(json.utf8))
        #expect(throws: PaymentTokenError(.decryptionFailed)) { try fixture.decryptor.decryptUnverifiedForTests(token) }
    }
}

extension PaymentTokenDecryptor {
    /// Decryption without the signature check, to reach the decryption step with an edited header.
    func decryptUnverifiedForTests(_ token: PaymentToken) throws(PaymentTokenError) -> DecryptedPaymentData {
        try decryptUnverified(token)
    }
}

/// A thread-safe counter for concurrency tests.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
