import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardJSON

/// `orchard keys csr|import|inspect`: merchant keys and Apple's certificates.
enum KeysCommand {
    static let usage = """
        usage: orchard keys csr --type ec|rsa --merchant-id ID --out DIR [--purpose processing|identity]
               orchard keys import --cert FILE (--key PEM | --p12 FILE --password PW) [--out DIR] [--export-p12 FILE]
               orchard keys inspect FILE [--password PW]

          csr      a new private key (PKCS#8 PEM, mode 0600) and a CSR to upload to Apple: EC P-256 (EC_v1) or
                   RSA-2048 (RSA_v1) for the Payment Processing certificate; --purpose identity makes an RSA-2048
                   key for the Merchant Identity certificate (Apple Pay on the Web)
          import   checks that Apple's certificate (.cer, DER or PEM) matches the key and reports its merchant
                   identifier hash, publicKeyHash and validity; --out writes <DIR>/certificate.pem and key.pem,
                   --export-p12 a PKCS#12 bundle protected by --password
          inspect  describes a certificate, private key, CSR or PKCS#12 bundle
        """

    static let command = CLI.Command.group(
        name: "keys", summary: "merchant keys: CSRs, Apple certificates, PKCS#12 (csr, import, inspect)",
        usage: usage, actions: ["csr": csr, "import": importCertificate, "inspect": inspect])

    static func csr(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["type", "merchant-id", "out", "purpose"], flags: [])
        let merchantID = try parsed.required("merchant-id")
        let directory = try parsed.required("out")
        let purpose = parsed.value("purpose") ?? "processing"
        guard ["processing", "identity"].contains(purpose) else {
            throw UsageError("--purpose is processing or identity")
        }
        let type = parsed.value("type") ?? (purpose == "identity" ? "rsa" : "ec")
        let key: EVPKey
        switch type {
        case "ec":
            guard purpose == "processing" else {
                throw UsageError("the Merchant Identity certificate needs an RSA key")
            }
            key = try EVPKey.generateEC(curve: "P-256")
        case "rsa": key = try EVPKey.generateRSA(bits: 2048)
        default: throw UsageError("--type is ec or rsa")
        }
        let csr = try CertificateSigningRequest.pem(key: key, subject: [("CN", merchantID), ("C", "US")])
        let base = purpose == "identity" ? "merchant-identity" : "payment-processing-\(type)"
        let keyPath = (directory as NSString).appendingPathComponent("\(base).key")
        let csrPath = (directory as NSString).appendingPathComponent("\(base).csr")
        try CLIInput.write(try key.privateKeyPEM(), to: keyPath)
        try CLIInput.write(csr, to: csrPath)
        let hash = Data(SHA256.hash(key.publicKeyDER)).base64EncodedString()
        io.out(
            json([
                ("key", .string(keyPath)), ("csr", .string(csrPath)),
                ("type", .string(type == "ec" ? "EC P-256" : "RSA-2048")),
                ("purpose", .string(purpose)), ("publicKeyHash", .string(hash)),
                ("merchantIdentifierHash", .string(Hex.encode(SHA256.hash(Array(merchantID.utf8))).uppercased())),
            ]))
        return 0
    }

    static func importCertificate(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["cert", "key", "p12", "password", "out", "export-p12"], flags: [])
        let certificate = try X509Certificate.load([UInt8](try CLIInput.read(try parsed.required("cert"))))
        let key: EVPKey
        if let p12 = parsed.value("p12") {
            key = try PKCS12Bundle.parse([UInt8](try CLIInput.read(p12)), password: try parsed.required("password")).key
        } else {
            key = try EVPKey(privateKeyPEM: try CLIInput.secret(try parsed.required("key")))
        }
        guard certificate.matches(privateKey: key) else {
            io.out(
                TokenCommand.errorJSON(
                    PaymentTokenError(.invalidMerchantKey, "the certificate does not belong to the key")))
            return 1
        }
        var fields = describe(certificate)
        fields.append(("matchesKey", .bool(true)))
        if let directory = parsed.value("out") {
            let certificatePath = (directory as NSString).appendingPathComponent("certificate.pem")
            let keyPath = (directory as NSString).appendingPathComponent("key.pem")
            try CLIInput.write(certificate.pem, to: certificatePath)
            try CLIInput.write(try key.privateKeyPEM(), to: keyPath)
            fields.append(("certificateFile", .string(certificatePath)))
            fields.append(("keyFile", .string(keyPath)))
        }
        if let bundlePath = parsed.value("export-p12") {
            let bundle = try PKCS12Bundle.make(
                key: key, certificate: certificate, password: try parsed.required("password"))
            try CLIInput.write(Data(bundle), to: bundlePath, secret: true)
            fields.append(("pkcs12File", .string(bundlePath)))
        }
        io.out(json(fields))
        return 0
    }

    static func inspect(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["password"], flags: [])
        guard parsed.positionals.count == 1 else { throw UsageError("inspect takes one FILE") }
        let file = try CLIInput.secret(parsed.positionals[0])
        func has(_ marker: String) -> Bool { file.withUnsafeBytes { $0.firstRange(of: Array(marker.utf8)) != nil } }
        // A private key is never made a String: only the other kinds are read as text.
        if !has("-----BEGIN CERTIFICATE REQUEST-----"), has("PRIVATE KEY-----") {
            let key = try EVPKey(privateKeyPEM: file, password: parsed.value("password"))
            io.out(json([("kind", .string("private_key"))] + describe(key)))
            return 0
        }
        let bytes = file.copyBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN CERTIFICATE REQUEST-----") {
            let (key, subject) = try CertificateSigningRequest.publicKey(csrPEM: text)
            io.out(json([("kind", .string("csr")), ("subject", .string(subject))] + describe(key)))
        } else if text.contains("-----BEGIN PUBLIC KEY-----") {
            io.out(json([("kind", .string("public_key"))] + describe(try EVPKey(publicKeyPEM: text))))
        } else if let certificate = try? X509Certificate.load(bytes) {
            io.out(json([("kind", .string("certificate"))] + describe(certificate)))
        } else if let password = parsed.value("password") {
            let bundle = try PKCS12Bundle.parse(bytes, password: password)
            var fields: [(String, JSONValue)] = [("kind", .string("pkcs12"))] + describe(bundle.certificate)
            fields.append(("matchesKey", .bool(bundle.certificate.matches(privateKey: bundle.key))))
            io.out(json(fields))
        } else {
            throw UsageError(
                "\(parsed.positionals[0]) is not a PEM/DER certificate, key or CSR (a PKCS#12 bundle needs --password)")
        }
        return 0
    }

    static func describe(_ key: EVPKey) -> [(String, JSONValue)] {
        [
            ("keyType", .string(key.kind == .ec ? "EC \(key.curveName ?? "")" : "\(key.kind.rawValue)-\(key.bits)")),
            ("publicKeyHash", .string(Data(SHA256.hash(key.publicKeyDER)).base64EncodedString())),
        ]
    }

    static func describe(_ certificate: X509Certificate) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [
            ("subject", .string(certificate.subject)), ("issuer", .string(certificate.issuer)),
            ("serialNumber", .string(certificate.serialNumberHex)),
            ("notBefore", .string(CLIInput.iso8601(certificate.notBefore))),
            ("notAfter", .string(CLIInput.iso8601(certificate.notAfter))),
            ("sha256Fingerprint", .string(certificate.sha256Fingerprint)),
        ]
        if let merchantID = certificate.subjectField("UID") {
            fields.append(("merchantIdentifier", .string(merchantID)))
        }
        if let hash = MerchantKey.merchantIdentifierHash(of: certificate) {
            fields.append(("merchantIdentifierHash", .string(Hex.encode(hash).uppercased())))
        }
        if let key = try? certificate.publicKey() { fields += describe(key) }
        let now = Date()
        fields.append(("validNow", .bool(certificate.notBefore <= now && now < certificate.notAfter)))
        return fields
    }

    static func json(_ fields: [(String, JSONValue)]) -> String {
        String(decoding: JSONValue.object(fields.map { JSONMember($0.0, $0.1) }).serialized, as: UTF8.self)
    }
}
