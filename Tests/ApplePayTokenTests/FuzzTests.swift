import ApplePaySandbox
import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardTestSupport
import Testing

/// Bounded, seeded mutation testing of token parsing, CMS handling and decryption: every mutant is either
/// rejected with a ``PaymentTokenError`` or, when accepted, decrypts to exactly the original payment data.
/// `ORCHARD_FUZZ_ITERATIONS` scales the number of mutants per seed token (default 400).
@Suite("Fuzzing: mutated tokens")
struct FuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["ORCHARD_FUZZ_ITERATIONS"] ?? "") ?? 400

    struct Seed: Sendable, CustomStringConvertible {
        var name: String
        var json: Data
        var decryptor: PaymentTokenDecryptor
        var now: Date
        var description: String { name }
    }

    static let seeds: [Seed] = {
        let fixture = SandboxFixture.shared
        var seeds: [Seed] = []
        let minter = TokenMinter(pki: fixture.pki)
        for version in [PaymentTokenVersion.ecV1, .rsaV1] {
            var request = fixture.request(version)
            request.applicationData = "0011223344556677"
            seeds.append(
                Seed(
                    name: "minted \(version.rawValue)", json: try! minter.mint(request), decryptor: fixture.decryptor,
                    now: SandboxFixture.now))
        }
        for id in ["gala", "basis-theory-rsa", "payu-apple-pay"] {
            guard let vector = Vectors.all.first(where: { $0.id == id }), let key = try? vector.merchantKey(),
                let json = try? vector.tokenData(), let anchor = try? Vectors.appleRoot()
            else { continue }
            seeds.append(
                Seed(
                    name: "real \(id)", json: json, decryptor: PaymentTokenDecryptor(trustAnchor: anchor, keys: [key]),
                    now: vector.verifyAt))
        }
        return seeds
    }()

    enum Field: String, CaseIterable {
        case data, signature, ephemeralPublicKey, wrappedKey, publicKeyHash, transactionId
    }

    /// The JSON object of a token, with paymentData possibly nested.
    static func split(_ json: Data) -> (root: [String: Any], nested: Bool) {
        let root = try! JSONSerialization.jsonObject(with: json) as! [String: Any]
        return (root, root["paymentData"] != nil)
    }

    static func paymentData(_ root: [String: Any], nested: Bool) -> [String: Any] {
        nested ? root["paymentData"] as! [String: Any] : root
    }

    static func rebuild(_ root: [String: Any], nested: Bool, paymentData: [String: Any]) -> Data {
        var root = root
        if nested { root["paymentData"] = paymentData } else { root = paymentData }
        return try! JSONSerialization.data(withJSONObject: root)
    }

    static func mutate(_ json: Data, using random: inout SeededGenerator) -> Data {
        let (root, nested) = split(json)
        var paymentData = paymentData(root, nested: nested)
        var header = paymentData["header"] as! [String: Any]
        func base64Field(_ name: String) -> (get: [UInt8], set: ([UInt8]) -> Void)? {
            if let text = paymentData[name] as? String, let bytes = Data(base64Encoded: text) {
                return ([UInt8](bytes), { paymentData[name] = Data($0).base64EncodedString() })
            }
            if let text = header[name] as? String, let bytes = Data(base64Encoded: text) {
                return ([UInt8](bytes), { header[name] = Data($0).base64EncodedString() })
            }
            return nil
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0...3:
            // Flip 1-4 bytes of a decoded base64 field.
            let names = ["data", "signature", "ephemeralPublicKey", "wrappedKey", "publicKeyHash"]
            guard let field = base64Field(names.randomElement(using: &random)!) else { break }
            var bytes = field.get
            guard !bytes.isEmpty else { break }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            field.set(bytes)
        case 4:
            // Truncate or extend the CMS signature.
            guard let field = base64Field("signature") else { break }
            var bytes = field.get
            if Bool.random(using: &random) {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            } else {
                bytes += (0..<Int.random(in: 1...64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            }
            field.set(bytes)
        case 5:
            // A random point (usually off the curve) under the P-256 SubjectPublicKeyInfo header.
            guard let field = base64Field("ephemeralPublicKey") else { break }
            var bytes = field.get
            for index in (bytes.count - 64)..<bytes.count { bytes[index] = UInt8.random(in: 0...255, using: &random) }
            field.set(bytes)
        case 6:
            // Huge or wrongly typed fields.
            let name = ["data", "signature", "transactionId", "applicationData", "version", "publicKeyHash"]
                .randomElement(using: &random)!
            let choices: [Any] = [
                String(repeating: "A", count: Int.random(in: 1...80_000, using: &random)), 42, NSNull(), [1, 2],
                ["a": "b"], "",
            ]
            let value = choices.randomElement(using: &random)!
            if ["transactionId", "applicationData", "publicKeyHash"].contains(name) {
                header[name] = value
            } else {
                paymentData[name] = value
            }
        case 7:
            // Remove a field.
            if Bool.random(using: &random), let key = header.keys.sorted().randomElement(using: &random) {
                header.removeValue(forKey: key)
            } else if let key = paymentData.keys.sorted().randomElement(using: &random) {
                paymentData.removeValue(forKey: key)
            }
        default:
            // Raw byte edits of the JSON text.
            var bytes = [UInt8](rebuild(root, nested: nested, paymentData: paymentData))
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                guard !bytes.isEmpty else { break }
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
                }
            }
            return Data(bytes)
        }
        if paymentData["header"] != nil { paymentData["header"] = header }
        return rebuild(root, nested: nested, paymentData: paymentData)
    }

    @Test(
        "mutants are rejected with a PaymentTokenError, or decrypt to the original", .timeLimit(.minutes(5)),
        arguments: seeds)
    func mutants(_ seed: Seed) throws {
        let original = try seed.decryptor.decrypt(try PaymentToken(json: seed.json), at: seed.now).json(revealing: true)
        var random = SeededGenerator(seed: 0x0_5EED_0F_0C4A_2D + UInt64(seed.name.utf8.count))
        var rejected: [String: Int] = [:]
        var accepted = 0
        for _ in 0..<Self.iterations {
            let mutant = Self.mutate(seed.json, using: &random)
            do {
                let token = try PaymentToken(json: mutant)
                _ = try? seed.decryptor.verify(token, at: seed.now)
                let payment = try seed.decryptor.decrypt(token, at: seed.now)
                #expect(payment.json(revealing: true) == original, "a mutant decrypted to different payment data")
                accepted += 1
            } catch {
                rejected[error.code.rawValue, default: 0] += 1
            }
        }
        // Most mutants must be refused; the few accepted ones change nothing signed (e.g. paymentMethod).
        #expect(rejected.values.reduce(0, +) > Self.iterations / 2)
        #expect(rejected.keys.allSatisfy { !$0.isEmpty })
        print(
            "fuzz \(seed.name): \(Self.iterations) mutants, \(accepted) accepted unchanged, rejected \(rejected.sorted { $0.key < $1.key })"
        )
    }

    /// The token with its signature's bytes changed by `edit`.
    static func editingSignature(_ json: Data, _ edit: (inout [UInt8]) -> Void) -> Data {
        let (root, nested) = split(json)
        var paymentData = paymentData(root, nested: nested)
        var bytes = [UInt8](Data(base64Encoded: paymentData["signature"] as! String)!)
        edit(&bytes)
        paymentData["signature"] = Data(bytes).base64EncodedString()
        return rebuild(root, nested: nested, paymentData: paymentData)
    }

    /// The last place `needle` occurs in `bytes`.
    static func lastIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        (0...(bytes.count - needle.count)).last { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    /// The SignerInfo's signature algorithm identifier (the last `ecdsa-with-SHA256` in the CMS bytes, after the
    /// certificates' own) replaced by `body`, another OID body of the same length, as the fuzz campaign found it.
    static func replacingSignatureAlgorithm(_ json: Data, with body: [UInt8]) -> Data {
        editingSignature(json) { bytes in
            let ecdsaWithSHA256: [UInt8] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]
            let found = lastIndex(of: ecdsaWithSHA256, in: bytes)!
            bytes.replaceSubrange((found + 2)..<(found + 10), with: body)
        }
    }

    @Test(
        "fuzz campaign findings: a SignerInfo signature algorithm other than ECDSA or RSA with SHA-256 is refused",
        arguments: seeds.filter { $0.name.hasPrefix("minted") || $0.name.hasSuffix("payu-apple-pay") })
    func unknownSignatureAlgorithmIsRefused(_ seed: Seed) throws {
        let madeUp: [UInt8] = [0x2a, 0x86, 0x00, 0x00, 0x01, 0xc9, 0x03, 0x02]
        let ecdsaWithSHA384: [UInt8] = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03]
        for body in [madeUp, ecdsaWithSHA384] {
            let token = try PaymentToken(json: Self.replacingSignatureAlgorithm(seed.json, with: body))
            #expect(throws: PaymentTokenError(.signatureInvalid)) { try seed.decryptor.decrypt(token, at: seed.now) }
            #expect(throws: PaymentTokenError(.signatureInvalid)) { try seed.decryptor.verify(token, at: seed.now) }
        }
    }

    /// Where the DER element at `index` of `bytes` has its content and where it ends (definite lengths).
    static func element(in bytes: [UInt8], at index: Int) -> (contentStart: Int, end: Int) {
        let first = Int(bytes[index + 1])
        guard first & 0x80 != 0 else { return (index + 2, index + 2 + first) }
        let count = first & 0x7f
        let length = bytes[(index + 2)..<(index + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
        return (index + 2 + count, index + 2 + count + length)
    }

    /// Respellings of the SignerInfo's issuer name that OpenSSL's name comparison folds: the case of its last
    /// letter, and the string type of its last string (PrintableString and UTF8String swapped).
    static let signerIssuerRespellings: [(name: String, edit: @Sendable (inout [UInt8], Range<Int>) -> Void)] = [
        ("a letter's case", { bytes, sid in
            let letter = sid.last { (0x41...0x5a).contains(bytes[$0]) || (0x61...0x7a).contains(bytes[$0]) }!
            bytes[letter] ^= 0x20
        }),
        ("a string's type", { bytes, sid in
            // The last PrintableString (0x13) or UTF8String (0x0c) header before the serial number.
            let header = sid.last { [0x13, 0x0c].contains(bytes[$0]) && bytes[$0 + 1] < 0x80 && bytes[$0 + 1] > 0 }!
            bytes[header] = bytes[header] == 0x13 ? 0x0c : 0x13
        }),
    ]

    @Test(
        "fuzz campaign finding: a signer identifier naming the leaf's issuer spelt otherwise is refused",
        arguments: seeds.filter { $0.name.hasPrefix("minted") || $0.name.hasPrefix("real") })
    func respelledSignerIsRefused(_ seed: Seed) throws {
        let signature = try PaymentToken(json: seed.json).signature
        let split = try #require(SignedDataSplitter.split(signature))
        let sid = try #require(SignedDataSplitter.detachSignerIdentifier(split.withoutCertificates)).signerIdentifier
        let start = try #require(Self.lastIndex(of: sid, in: signature))
        // The issuer Name inside the SignerInfo's IssuerAndSerialNumber (SEQUENCE { issuer Name, serial INTEGER }).
        let issuer = Self.element(in: sid, at: Self.element(in: sid, at: 0).contentStart)
        let names = (start + issuer.contentStart)..<(start + issuer.end)
        for respelling in Self.signerIssuerRespellings {
            let token = try PaymentToken(json: Self.editingSignature(seed.json) { respelling.edit(&$0, names) })
            // A decryptor that has not seen the certificates, and one that has (the cached chain's path).
            let fresh = PaymentTokenDecryptor(trustAnchor: seed.decryptor.trustAnchor, keys: seed.decryptor.keys)
            let cached = PaymentTokenDecryptor(trustAnchor: seed.decryptor.trustAnchor, keys: seed.decryptor.keys)
            _ = try cached.verify(try PaymentToken(json: seed.json), at: seed.now)
            for decryptor in [fresh, cached] {
                #expect(throws: PaymentTokenError(.signatureInvalid), "\(respelling.name)") {
                    try decryptor.verify(token, at: seed.now)
                }
            }
            #expect(throws: PaymentTokenError(.signatureInvalid)) { try cached.decrypt(token, at: seed.now) }
        }
    }

    @Test(
        "fuzz campaign finding: an element after the SignedData in its [0] is malformed_token, whether the certificates were seen or not",
        arguments: seeds.filter { $0.name.hasPrefix("real") })
    func elementAfterSignedData(_ seed: Seed) throws {
        // Apple's signatures are BER with indefinite lengths: ContentInfo, [0] and SignedData each end in
        // end-of-contents octets. An empty BOOLEAN goes between the SignedData's and the [0]'s, as the campaign
        // found it.
        let extended = Self.editingSignature(seed.json) { bytes in bytes.insert(contentsOf: [0x01, 0x00], at: bytes.count - 4) }
        let token = try PaymentToken(json: extended)
        let fresh = PaymentTokenDecryptor(trustAnchor: seed.decryptor.trustAnchor, keys: seed.decryptor.keys)
        let cached = PaymentTokenDecryptor(trustAnchor: seed.decryptor.trustAnchor, keys: seed.decryptor.keys)
        _ = try cached.verify(try PaymentToken(json: seed.json), at: seed.now)
        for decryptor in [fresh, cached] {
            #expect(throws: PaymentTokenError(.malformedToken)) { try decryptor.verify(token, at: seed.now) }
            #expect(throws: PaymentTokenError(.malformedToken)) { try decryptor.decrypt(token, at: seed.now) }
        }
    }

    @Test(
        "fuzz campaign finding: a ContentInfo or SignedData SEQUENCE with a primitive header (0x10) is refused, as OpenSSL's CMS parse refuses it",
        arguments: seeds)
    func primitiveSequenceHeaders(_ seed: Seed) throws {
        // The genuine token first: its certificates are then cached, and the signature is split before it is parsed.
        _ = try seed.decryptor.decrypt(PaymentToken(json: seed.json), at: seed.now)
        let (root, nested) = Self.split(seed.json)
        var paymentData = Self.paymentData(root, nested: nested)
        let signature = [UInt8](Data(base64Encoded: paymentData["signature"] as! String)!)
        // ContentInfo's tag at 0; SignedData's after the signedData OID and the [0] EXPLICIT header.
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let oidEnd = try #require(Self.lastIndex(of: oid, in: Array(signature.prefix(32)))) + oid.count
        #expect(signature[oidEnd] == 0xA0)
        let lengthOctet = signature[oidEnd + 1]
        let signedData = oidEnd + 2 + (lengthOctet & 0x80 != 0 ? Int(lengthOctet & 0x7F) : 0)
        #expect(signature[0] == 0x30 && signature[signedData] == 0x30)
        for offset in [0, signedData] {
            var mutated = signature
            mutated[offset] = 0x10
            paymentData["signature"] = Data(mutated).base64EncodedString()
            let token = try PaymentToken(json: Self.rebuild(root, nested: nested, paymentData: paymentData))
            #expect(throws: PaymentTokenError.self, "offset \(offset)") { try seed.decryptor.verify(token, at: seed.now) }
        }
    }

    @Test(
        "fuzz campaign finding: an ephemeral key whose bit string claims an unused bit is malformed_token, not the same key",
        arguments: seeds.filter { $0.name.hasSuffix("EC_v1") || $0.name.hasSuffix("payu-apple-pay") })
    func ephemeralKeyNotDER(_ seed: Seed) throws {
        let (root, nested) = Self.split(seed.json)
        var paymentData = Self.paymentData(root, nested: nested)
        var header = paymentData["header"] as! [String: Any]
        var key = [UInt8](Data(base64Encoded: header["ephemeralPublicKey"] as! String)!)
        // BIT STRING, 66 bytes, 0 unused bits, an uncompressed point: the unused-bits octet becomes 1.
        let bitString = try #require(Self.lastIndex(of: [0x03, 0x42, 0x00, 0x04], in: key))
        key[bitString + 2] = 0x01
        header["ephemeralPublicKey"] = Data(key).base64EncodedString()
        paymentData["header"] = header
        let token = try PaymentToken(json: Self.rebuild(root, nested: nested, paymentData: paymentData))
        // OpenSSL's decoder clears the bit the string claims unused. When it was zero (about half of the minted
        // tokens' random keys) the point is the same and the key is refused as not DER; otherwise the point moves off
        // the curve and the decoder refuses it. Either way it never decrypts as the same key.
        let refused = #expect(throws: PaymentTokenError.self) { try seed.decryptor.decryptUnverifiedForTests(token) }
        if key[key.count - 1] & 1 == 0 {
            #expect(refused?.code == .malformedToken, "\(String(describing: refused))")
        } else {
            #expect(refused?.code == .decryptionFailed, "\(String(describing: refused))")
        }
        // The key is signed content: the token as a whole fails on its signature first.
        #expect(throws: PaymentTokenError(.signatureInvalid)) { try seed.decryptor.decrypt(token, at: seed.now) }
    }

    @Test("properly encrypted plaintexts that are not payment data are rejected", .timeLimit(.minutes(5)))
    func randomPlaintexts() throws {
        let fixture = SandboxFixture.shared
        let minter = TokenMinter(pki: fixture.pki)
        var random = SeededGenerator(seed: 0xFEED)
        let samples: [String] = [
            "", "null", "true", "\"string\"", "{\"applicationPrimaryAccountNumber\": 4111111111111111}",
            String(repeating: "[", count: 5000), String(repeating: "{\"a\":", count: 2000),
            "{\"a\": \"\\ud800\"}", "{\"a\": 1e999999}", "{\"a\": -0.0e-0, \"a\": 1}",
        ]
        var plaintexts = samples.map { Array($0.utf8) }
        for _ in 0..<60 {
            plaintexts.append(
                (0..<Int.random(in: 0...512, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        for plaintext in plaintexts {
            for version in [PaymentTokenVersion.ecV1, .rsaV1] {
                var request = fixture.request(version)
                request.plaintextOverride = plaintext
                let token = try PaymentToken(json: try minter.mint(request))
                #expect(throws: PaymentTokenError(.decryptionFailed)) {
                    try fixture.decryptor.decrypt(token, at: SandboxFixture.now)
                }
            }
        }
    }

    @Test("the JSON reader refuses malformed text and never crashes", arguments: 0..<4)
    func jsonReader(round: Int) {
        var random = SeededGenerator(seed: UInt64(round) &* 7919)
        let alphabet = Array("{}[]\":,0123456789-+.eEtrufalsn \\u\"abc".utf8)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in alphabet.randomElement(using: &random)!
            }
            _ = try? PaymentToken(json: Data(bytes))
        }
    }
}
