import ApplePayModel
import ApplePaySandbox
import ApplePayToken
import Foundation
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// `orchard sandbox pki|merchant|mint`: the test Apple PKI and tokens minted with it.
enum SandboxCommand {
    static let usage = """
        usage: orchard sandbox pki --out DIR [--days N]
               orchard sandbox merchant --merchant-id ID (--csr CSR | --public-key PEM | --new-key ec|rsa) --out DIR
                                        [--pki DIR] [--days N]
               orchard sandbox mint --database sqlite:PATH [--amount 12.34] [--currency TWD] [--pan DIGITS]
               orchard sandbox mint --cert MERCHANT_CERT [--pki DIR] [--merchant-id ID] [--rsa] [--pan PAN]
                                    [--expiry YYMMDD] [--amount 12.34] [--currency TWD|901] [--cryptogram B64] [--eci N]
                                    [--cardholder NAME] [--at ISO8601] [--application-data HEX]
                                    [--transaction-id HEX]

          pki       a test root (P-384), intermediate (OID 1.2.840.113635.100.6.2.14) and signing leaf
                    (OID 1.2.840.113635.100.6.29) as PEM files; trust sandbox-root-ca.pem with --root
          merchant  a Payment Processing certificate from the sandbox intermediate (OID 1.2.840.113635.100.6.32)
          mint      prints a token exactly as Apple delivers it (EC_v1, or RSA_v1 with --rsa)

          --pki defaults to $ORCHARD_DATA_DIR/sandbox-pki (~/.local/share/orchard/sandbox-pki).
        """

    static let command = CLI.Command.group(
        name: "sandbox", summary: "a test Apple PKI and token minter (pki, merchant, mint)",
        usage: usage, actions: ["pki": pki, "merchant": merchant, "mint": mint])

    static var defaultPKIDirectory: String {
        (TrustAnchor.defaultDataDirectory(environment: ProcessEnvironment.variables) as NSString)
            .appendingPathComponent("sandbox-pki")
    }

    static func days(_ parsed: Arguments, default value: Int) throws -> Int {
        guard let text = parsed.value("days") else { return value }
        guard let days = Int(text), days > 0 else { throw UsageError("--days must be a positive number") }
        return days
    }

    static func loadPKI(_ parsed: Arguments) throws -> SandboxPKI {
        let directory = parsed.value("pki") ?? defaultPKIDirectory
        do {
            return try SandboxPKI(directory: URL(fileURLWithPath: directory))
        } catch {
            throw UsageError(
                "cannot read the sandbox PKI in \(directory) (create it with orchard sandbox pki --out DIR)")
        }
    }

    static func pki(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["out", "days"], flags: [])
        let directory = try parsed.required("out")
        let now = Date()
        let pki = try SandboxPKI.generate(
            notBefore: now.addingTimeInterval(-86400),
            notAfter: now.addingTimeInterval(TimeInterval(try days(parsed, default: 3 * 365)) * 86400))
        try pki.write(to: URL(fileURLWithPath: directory))
        io.out(
            KeysCommand.json([
                ("directory", .string(directory)),
                ("root", .string((directory as NSString).appendingPathComponent(SandboxPKI.FileName.rootCertificate))),
                ("rootFingerprint", .string(pki.root.sha256Fingerprint)),
            ]))
        return 0
    }

    static func merchant(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["pki", "merchant-id", "csr", "public-key", "new-key", "out", "days"], flags: [])
        let merchantID = try parsed.required("merchant-id")
        let directory = try parsed.required("out")
        let pki = try loadPKI(parsed)
        var fields: [(String, JSONValue)] = []
        let publicKeyPEM: String
        if let csr = parsed.value("csr") {
            publicKeyPEM = try CLIInput.text(csr)
        } else if let path = parsed.value("public-key") {
            publicKeyPEM = try CLIInput.text(path)
        } else if let type = parsed.value("new-key") {
            let key: EVPKey
            switch type {
            case "ec": key = try EVPKey.generateEC()
            case "rsa": key = try EVPKey.generateRSA()
            default: throw UsageError("--new-key is ec or rsa")
            }
            let keyPath = (directory as NSString).appendingPathComponent("merchant.key")
            try CLIInput.write(try key.privateKeyPEM(), to: keyPath)
            fields.append(("key", .string(keyPath)))
            publicKeyPEM = key.publicKeyPEM
        } else {
            throw UsageError("give --csr, --public-key or --new-key")
        }
        let now = Date()
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: publicKeyPEM, merchantIdentifier: merchantID, notBefore: now.addingTimeInterval(-86400),
            notAfter: now.addingTimeInterval(TimeInterval(try days(parsed, default: 2 * 365)) * 86400))
        let certificatePath = (directory as NSString).appendingPathComponent("merchant.pem")
        try CLIInput.write(certificate, to: certificatePath)
        fields.insert(("certificate", .string(certificatePath)), at: 0)
        fields += KeysCommand.describe(try X509Certificate(pem: certificate))
        io.out(KeysCommand.json(fields))
        return 0
    }

    static func mint(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        if arguments.contains(where: { $0 == "--database" || $0.hasPrefix("--database=") }) {
            return SandboxDatabaseMint.run(["mint"] + arguments, io)
        }
        let parsed = try Arguments(
            arguments,
            options: [
                "cert", "pki", "merchant-id", "pan", "expiry", "amount", "currency", "cryptogram", "eci", "cardholder",
                "at",
                "application-data", "transaction-id",
            ], flags: ["rsa"])
        let certificatePEM = try CLIInput.text(try parsed.required("cert"))
        let pki = try loadPKI(parsed)
        var request = MintRequest(
            version: parsed.flag("rsa") ? .rsaV1 : .ecV1, merchantCertificatePEM: certificatePEM,
            signingTime: try CLIInput.date(parsed.value("at")))
        request.merchantIdentifier = parsed.value("merchant-id")
        if let pan = parsed.value("pan") {
            guard (12...19).contains(pan.count), pan.allSatisfy(\.isASCIIDigit) else {
                throw UsageError("--pan must be 12-19 digits")
            }
            request.pan = pan
        }
        if let expiry = parsed.value("expiry") {
            guard expiry.count == 6, expiry.allSatisfy(\.isASCIIDigit) else { throw UsageError("--expiry is YYMMDD") }
            request.expiration = expiry
        }
        let currencyText = parsed.value("currency") ?? "TWD"
        let currency =
            currencyText.allSatisfy(\.isASCIIDigit)
            ? try Currency(numericCode: currencyText) : try Currency(code: currencyText.uppercased())
        request.currencyCode = currency.numericCode
        if let amount = parsed.value("amount") {
            request.amount = try Money(amount, currency: currency).minorUnits
        }
        if let cryptogram = parsed.value("cryptogram") { request.cryptogram = cryptogram }
        if let eci = parsed.value("eci") { request.eci = eci }
        request.cardholderName = parsed.value("cardholder")
        if let data = parsed.value("application-data") {
            guard Hex.decode(data) != nil else { throw UsageError("--application-data must be hex") }
            request.applicationData = data
        }
        if let transaction = parsed.value("transaction-id") {
            guard let bytes = Hex.decode(transaction), !bytes.isEmpty else {
                throw UsageError("--transaction-id must be hex")
            }
            request.transactionIdentifier = transaction
        }
        let token = try TokenMinter(pki: pki).mint(request)
        io.out(String(decoding: token, as: UTF8.self))
        return 0
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
