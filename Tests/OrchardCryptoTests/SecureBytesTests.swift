import Dispatch
import Foundation
import Testing

@testable import OrchardCrypto

@Suite("SecureBytes: a copy-on-write value")
struct SecureBytesTests {
    @Test("a value equals itself, and equal contents compare equal whatever the order")
    func selfComparison() {
        let secret = SecureBytes(Array("4111111111111111".utf8))
        let same = secret
        #expect(secret == secret)
        #expect(secret == same && same == secret)
        #expect(secret != SecureBytes(Array("4111111111111112".utf8)))
        #expect(secret != SecureBytes(Array("411111111111111".utf8)))
        #expect(SecureBytes([UInt8]()) == SecureBytes([UInt8]()))
    }

    @Test("threads comparing a == b and b == a at once, and x == x, all finish")
    func concurrentComparisons() async {
        let a = SecureBytes(Array(repeating: 7, count: 64))
        let b = SecureBytes(Array(repeating: 7, count: 64))
        let c = SecureBytes(Array(repeating: 8, count: 64))
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    var all = true
                    for _ in 0..<2_000 {
                        switch index % 4 {
                        case 0: all = all && a == b
                        case 1: all = all && b == a
                        case 2: all = all && a == a
                        default: all = all && a != c && c != b
                        }
                    }
                    return all
                }
            }
            var collected: [Bool] = []
            for await result in group { collected.append(result) }
            return collected
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    @Test("erasing a copy leaves the other copies their bytes; erasing the last holder empties it")
    func copyOnWrite() {
        var first = SecureBytes(Array("secret".utf8))
        var second = first
        second.erase()
        #expect(second.isEmpty)
        #expect(first.copyBytes() == Array("secret".utf8))
        first.erase()
        #expect(first.isEmpty && first.count == 0)
        first.erase()
        #expect(first == second)
    }

    @Test("a uniquely held value is zeroed in place by erase: its allocation reads as zeros")
    func eraseZerosInPlace() {
        var secret = SecureBytes(Array(repeating: 0xAB, count: 32))
        let base = secret.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) }
        secret.erase()
        // The allocation is still alive (held by `secret`), now empty: its bytes were overwritten.
        let after = Array(UnsafeRawBufferPointer(start: base, count: 32))
        #expect(after == Array(repeating: 0, count: 32))
        #expect(secret.isEmpty)
    }

    @Test("a copy shares the allocation (no copy of the secret is made until one side changes)")
    func copiesShare() {
        let secret = SecureBytes(Array("4111111111111111".utf8))
        let copy = secret
        let a = secret.withUnsafeBytes { $0.baseAddress }
        let b = copy.withUnsafeBytes { $0.baseAddress }
        #expect(a == b)
    }

    @Test("a file's bytes come into a secure buffer; a borrowed Data lends them without a copy")
    func fileAndBorrowedData() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("secure-bytes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("-----BEGIN PRIVATE KEY-----\n".utf8).write(to: url)
        let read = try SecureBytes(contentsOf: url)
        #expect(read.copyBytes() == Array("-----BEGIN PRIVATE KEY-----\n".utf8))
        let lent = read.withBorrowedData { data in data.withUnsafeBytes { $0.baseAddress } }
        #expect(lent == read.withUnsafeBytes { $0.baseAddress })
    }

    @Test("a private key goes to PEM and back in secure buffers; OpenSSL's buffer is zeroed")
    func privateKeyPEM() throws {
        let key = try EVPKey.generateEC()
        let pem = try key.privateKeyPEM()
        #expect(pem.withUnsafeBytes { $0.starts(with: Array("-----BEGIN PRIVATE KEY-----".utf8)) })
        let again = try EVPKey(privateKeyPEM: pem)
        #expect(again.hasSamePublicKey(as: key))
        let encrypted = try key.privateKeyPEM(password: "pass phrase")
        #expect(try EVPKey(privateKeyPEM: encrypted, password: "pass phrase").hasSamePublicKey(as: key))
        #expect(throws: CryptoError.self) { try EVPKey(privateKeyPEM: SecureBytes(Array("not a key".utf8))) }
    }

    @Test("secret JSON members: written escaped, read back unescaped, also as JSONEncoder wrote them")
    func secureJSON() throws {
        let value = SecureBytes(Array("a/b\"c\\d\n\u{1}e".utf8))
        var json: [UInt8] = [UInt8(ascii: "{")]
        SecureJSON.appendMember("k", value, to: &json)
        json.append(UInt8(ascii: "}"))
        #expect(String(decoding: json, as: UTF8.self) == #"{"k":"a/b\"c\\d\n\u0001e"}"#)
        #expect(SecureJSON.string(at: ["k"], in: SecureBytes(json)) == value)
        let encoded = try JSONEncoder().encode(["k": "-----BEGIN/KEY-----\nAB+/=\n"])
        #expect(
            SecureJSON.string(at: ["k"], in: SecureBytes(encoded))
                == SecureBytes(Array("-----BEGIN/KEY-----\nAB+/=\n".utf8)))
        #expect(SecureJSON.string(at: ["other"], in: SecureBytes(encoded)) == nil)
    }
}
