import ApplePaySandbox
import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto

enum BenchBreakdown {
    static func run(tokens: [Data], decryptor: PaymentTokenDecryptor, key: MerchantKey, now: Date, io: CLIOutput) throws {
        let parsed = try tokens.map { try PaymentToken(json: $0) }
        var i = 0
        func t(_ name: String, _ body: () -> Void) {
            let rate = BenchCommand.measure(seconds: 0.3, body)
            io.out("  \(name): \(BenchCommand.format(1e6 / rate)) µs")
        }
        let nullctx = OSSL_LIB_CTX_new()
        _ = OSSL_PROVIDER_load(nullctx, "null")
        if false { t("d2i cms nullctx") {
            let sig = parsed[i % parsed.count].signature; i += 1
            sig.withUnsafeBufferPointer { b in
                var c: UnsafePointer<UInt8>? = b.baseAddress
                var cms = CMS_ContentInfo_new_ex(nullctx, nil)
                cms = d2i_CMS_ContentInfo(&cms, &c, b.count)
                CMS_ContentInfo_free(cms)
            }
        } }
        // Verify with a nullctx-parsed CMS and a default-ctx leaf.
        let leafCMS: X509Certificate = {
            let sig = parsed[0].signature
            return sig.withUnsafeBufferPointer { b in
                var c: UnsafePointer<UInt8>? = b.baseAddress
                let cms = d2i_CMS_ContentInfo(nil, &c, b.count)!
                let certs = CMS_get1_certs(cms)!
                let leaf = X509Certificate(retaining: orchard_sk_X509_value(certs, 0)!)
                orchard_sk_X509_pop_free(certs)
                CMS_ContentInfo_free(cms)
                return try! X509Certificate(der: leaf.der)
            }
        }()
        func verifyNull(_ token: PaymentToken) -> Int32 {
            return token.signature.withUnsafeBufferPointer { b in
                var c: UnsafePointer<UInt8>? = b.baseAddress
                var cms = CMS_ContentInfo_new_ex(nullctx, nil)
                cms = d2i_CMS_ContentInfo(&cms, &c, b.count)
                defer { CMS_ContentInfo_free(cms) }
                let si = orchard_sk_CMS_SignerInfo_value(CMS_get0_SignerInfos(cms), 0)
                CMS_SignerInfo_set1_signer_cert(si, leafCMS.pointer)
                var content = token.signedContent
                return content.withUnsafeMutableBytes { buffer -> Int32 in
                    let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))
                    defer { BIO_free(bio) }
                    return CMS_verify(cms, nil, nil, bio, nil, UInt32(CMS_DETACHED | CMS_BINARY | CMS_NO_SIGNER_CERT_VERIFY))
                }
            }
        }
        io.out("  nullctx verify result: \(verifyNull(parsed[0])) \(OpenSSLErrorQueue.drain())")
        if ProcessInfo.processInfo.environment["ORCHARD_BENCH_NULLV_ONLY"] != nil {
            for k in 0..<3000 { _ = verifyNull(parsed[k % parsed.count]) }
            exit(0)
        }
        if ProcessInfo.processInfo.environment["ORCHARD_BENCH_D2I_ONLY"] != nil {
            let sig = parsed[0].signature
            for _ in 0..<3000 {
                sig.withUnsafeBufferPointer { b in
                    var c: UnsafePointer<UInt8>? = b.baseAddress
                    let cms = d2i_CMS_ContentInfo(nil, &c, b.count)
                    CMS_ContentInfo_free(cms)
                }
            }
            exit(0)
        }
        t("nullctx verify") { _ = verifyNull(parsed[i % parsed.count]); i += 1 }
        t("json parse") { _ = try! PaymentToken(json: tokens[i % tokens.count]); i += 1 }
        t("d2i cms") {
            let sig = parsed[i % parsed.count].signature; i += 1
            sig.withUnsafeBufferPointer { b in
                var c: UnsafePointer<UInt8>? = b.baseAddress
                let cms = d2i_CMS_ContentInfo(nil, &c, b.count)
                CMS_ContentInfo_free(cms)
            }
        }
        t("d2i cms propq input!=der") {
            let sig = parsed[i % parsed.count].signature; i += 1
            sig.withUnsafeBufferPointer { b in
                var c: UnsafePointer<UInt8>? = b.baseAddress
                var cms = CMS_ContentInfo_new_ex(nil, "input!=der")
                cms = d2i_CMS_ContentInfo(&cms, &c, b.count)
                CMS_ContentInfo_free(cms)
            }
        }
        let point = Array(parsed[0].keyMaterial.suffix(65))
        t("fromdata ephemeral") {
            let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)
            EVP_PKEY_fromdata_init(ctx)
            var pkey: OpaquePointer?
            var pointCopy = point
            "prime256v1".withCString { group in
                pointCopy.withUnsafeMutableBytes { pb in
                    var params = [
                        OSSL_PARAM_construct_utf8_string("group", UnsafeMutablePointer(mutating: group), 0),
                        OSSL_PARAM_construct_octet_string("pub", pb.baseAddress, 65),
                        OSSL_PARAM_construct_end(),
                    ]
                    _ = EVP_PKEY_fromdata(ctx, &pkey, orchard_EVP_PKEY_PUBLIC_KEY(), &params)
                }
            }
            EVP_PKEY_free(pkey)
            EVP_PKEY_CTX_free(ctx)
        }
        t("copy params + set1 encoded") {
            let pkey = EVP_PKEY_new()
            EVP_PKEY_copy_parameters(pkey, key.privateKey.pointer)
            EVP_PKEY_set1_encoded_public_key(pkey, point, 65)
            EVP_PKEY_free(pkey)
        }
        t("verify (full)") { _ = try! decryptor.verify(parsed[i % parsed.count], at: now); i += 1 }
        t("decrypt unverified") { _ = try! decryptor.decryptUnverified(parsed[i % parsed.count]); i += 1 }
        t("d2i_PUBKEY ephemeral") { _ = try! EVPKey(publicKeyDER: parsed[i % parsed.count].keyMaterial); i += 1 }
        t("ctx new from pkey + derive_init") {
            let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.privateKey.pointer, nil)
            EVP_PKEY_derive_init(ctx)
            EVP_PKEY_CTX_free(ctx)
        }
        t("aes-gcm open 200B") {
            _ = try! AESGCM.open([UInt8](repeating: 1, count: 216), key: [UInt8](repeating: 2, count: 32), nonce: [UInt8](repeating: 0, count: 16))
        }
    }
}
