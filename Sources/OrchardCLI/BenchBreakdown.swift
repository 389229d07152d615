import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto

/// `orchard bench token --breakdown`: the cost of each stage of token processing, measured one by one.
enum BenchBreakdown {
    static func run(
        tokens: [Data], leafPEM: String, decryptor: PaymentTokenDecryptor, key: MerchantKey, now: Date, seconds: Double,
        io: CLIOutput
    )
        throws
    {
        let parsed = try tokens.map { try PaymentToken(json: $0) }
        var index = 0
        func next() -> PaymentToken {
            index += 1
            return parsed[index % parsed.count]
        }
        func stage(_ name: String, _ body: () -> Void) {
            let rate = BenchCommand.measure(seconds: seconds, body)
            io.out("  \(name.padding(toLength: 58, withPad: " ", startingAt: 0)) \(BenchCommand.format(1e6 / rate)) µs")
        }
        io.out("stages (each measured alone):")
        stage("token JSON parse + base64 (PaymentToken(json:))") {
            _ = try? PaymentToken(json: tokens[index % tokens.count])
            index += 1
        }
        stage("d2i_CMS_ContentInfo, default library context") {
            let signature = next().signature
            signature.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                CMS_ContentInfo_free(d2i_CMS_ContentInfo(nil, &cursor, buffer.count))
            }
        }
        let parsing = OSSL_LIB_CTX_new()
        defer { OSSL_LIB_CTX_free(parsing) }
        _ = OSSL_PROVIDER_load(parsing, "null")
        stage("d2i_CMS_ContentInfo, key-decoder-free context (first sight)") {
            let signature = next().signature
            signature.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                var cms = CMS_ContentInfo_new_ex(parsing, nil)
                cms = d2i_CMS_ContentInfo(&cms, &cursor, buffer.count)
                CMS_ContentInfo_free(cms)
            }
        }
        let leaf = try X509Certificate(pem: leafPEM)
        for (label, context) in [("key-decoder-free", ParsingContext.shared), ("default", nil)] {
            let parsedCMS = try parsed.map { try CMSSignedData(der: $0.signature, context: context) }
            stage("CMS signature checks alone, structure parsed in \(label) context") {
                index += 1
                let cms = parsedCMS[index % parsedCMS.count]
                var content = parsed[index % parsed.count].signedContent
                _ = PaymentTokenDecryptor.cmsVerify(
                    cms, signerInfo: cms.onlySignerInfo!, signer: leaf, content: &content)
            }
        }
        stage("split certificates from the SignedData (generic ASN.1)") {
            _ = SignedDataSplitter.split(next().signature)
        }
        let stripped = parsed.map { SignedDataSplitter.split($0.signature)!.withoutCertificates }
        stage("d2i_CMS_ContentInfo without certificates (hot path)") {
            index += 1
            stripped[index % stripped.count].withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                CMS_ContentInfo_free(d2i_CMS_ContentInfo(nil, &cursor, buffer.count))
            }
        }
        let strippedCMS = try stripped.map { try CMSSignedData(der: $0, context: nil) }
        stage("CMS signature checks alone, without certificates, default context") {
            index += 1
            let cms = strippedCMS[index % strippedCMS.count]
            var content = parsed[index % parsed.count].signedContent
            let ok = PaymentTokenDecryptor.cmsVerify(
                cms, signerInfo: cms.onlySignerInfo!, signer: leaf, content: &content)
            precondition(ok)
        }
        stage("verify: parse + checks + cached chain + CMS signature checks") {
            _ = try? decryptor.verify(next(), at: now)
        }
        stage("ECDH with the ephemeral key (set point, check, derive)") {
            _ = try? PaymentTokenDecryptor.ecdh(key: key, peerSPKI: next().keyMaterial)
        }
        stage("decrypt without verify: ECDH + KDF + AES-GCM + plaintext") {
            _ = try? decryptor.decryptUnverified(next())
        }
        ERR_clear_error()
    }
}
