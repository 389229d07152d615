import Testing

@testable import OrchardCrypto

@Suite("Crypto primitives")
struct OrchardCryptoTests {
    @Test("SHA-256 of known inputs")
    func sha256() {
        #expect(
            Hex.encode(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(parts: [Array("a".utf8), Array("bc".utf8)]) == SHA256.hash(Array("abc".utf8)))
    }

    @Test("HMAC-SHA256, RFC 4231 test case 2")
    func hmac() {
        let mac = HMACSHA256.authenticationCode(
            key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.isValid(mac, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        #expect(!HMACSHA256.isValid(mac, key: Array("Jeff".utf8), message: Array("what do ya want for nothing?".utf8)))
    }

    @Test("AES-GCM round trip with 12- and 16-byte nonces, and a flipped byte is refused", arguments: [12, 16])
    func aesGCM(nonceLength: Int) throws {
        let key = try SecureRandom.bytes(32)
        let nonce = [UInt8](repeating: 0, count: nonceLength)
        let plaintext = Array("{\"amount\":1275}".utf8)
        var sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, authenticating: [1, 2, 3])
        #expect(sealed.count == plaintext.count + 16)
        let opened = try AESGCM.open(sealed, key: key, nonce: nonce, authenticating: [1, 2, 3])
        #expect(opened.copyBytes() == plaintext)
        #expect(throws: CryptoError(code: .authenticationFailed)) {
            try AESGCM.open(sealed, key: key, nonce: nonce, authenticating: [1, 2, 4])
        }
        sealed[0] ^= 1
        #expect(throws: CryptoError(code: .authenticationFailed)) { try AESGCM.open(sealed, key: key, nonce: nonce) }
        #expect(throws: CryptoError(code: .invalidInput)) { try AESGCM.open([1, 2], key: key, nonce: nonce) }
        #expect(throws: CryptoError(code: .invalidInput)) { try AESGCM.seal(plaintext, key: [1, 2], nonce: nonce) }
    }

    @Test("AES-128-GCM known answer (NIST GCM test case 2)")
    func aesGCMKnownAnswer() throws {
        let sealed = try AESGCM.seal(
            [UInt8](repeating: 0, count: 16), key: [UInt8](repeating: 0, count: 16),
            nonce: [UInt8](repeating: 0, count: 12))
        #expect(Hex.encode(sealed) == "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf")
    }

    @Test("secure bytes erase, compare in constant time and never print their contents")
    func secureBytes() {
        var secret = SecureBytes(Array("4111111111111111".utf8))
        #expect(secret.count == 16)
        #expect(secret == SecureBytes(Array("4111111111111111".utf8)))
        #expect(!String(describing: secret).contains("4111"))
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("4111"))
        secret.erase()
        #expect(secret.isEmpty)
        secret.erase()
    }

    @Test("hex round trip and rejection")
    func hex() {
        #expect(Hex.decode("00fFa1") == [0, 255, 161])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.encode([0, 255]) == "00ff")
    }

    @Test("random alphanumeric strings have the asked length and alphabet")
    func random() throws {
        let text = try SecureRandom.alphanumeric(40)
        #expect(text.count == 40)
        #expect(text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(try SecureRandom.alphanumeric(40) != text)
    }
}
