import ApplePayToken
import Foundation
import OrchardBase
import OrchardCrypto
import OrchardJSON

import enum OrchardBase.RFC3339

/// `orchard token decrypt|verify`: verify (and decrypt) an Apple Pay payment token.
enum TokenCommand {
    static let usage = """
        usage: orchard token decrypt --token FILE [--root PEM] [--key PEM]... [--cert PEM]... [--merchant-id ID]
                                     [--at ISO8601] [--window-seconds N] [--reveal]
               orchard token verify  --token FILE [--root PEM] [--at ISO8601] [--window-seconds N]

          --token FILE        the token JSON (whole token or paymentData alone; - reads standard input)
          --root PEM          the trust anchor; default: Apple Root CA - G3 at $ORCHARD_APPLE_ROOT or
                              $ORCHARD_DATA_DIR/apple-root-ca-g3.pem (its fingerprint is checked)
          --key PEM           a merchant Payment Processing private key (repeatable)
          --cert PEM          the certificate of the --key at the same position (repeatable)
          --merchant-id ID    the merchant identifier, for EC keys given without a certificate
          --at ISO8601        "now" (default: the system clock)
          --window-seconds N  the oldest accepted signature, in seconds (default 300)
          --reveal            print the PAN and cryptogram in clear (default: masked and removed)

        exit status: 0 accepted, 1 rejected (prints {"error": {"code", "message"}}), 2 bad usage or unreadable input
        """

    static let command = CLI.Command(
        name: "token", summary: "verify and decrypt Apple Pay payment tokens (decrypt, verify)"
    ) {
        arguments, io in
        guard let action = arguments.first, ["decrypt", "verify"].contains(action) else {
            return io.unknownSubcommand(arguments, usage: usage)
        }
        let parsed: Arguments
        let decryptor: PaymentTokenDecryptor
        let token: PaymentToken
        let now: Date
        do {
            parsed = try Arguments(
                Array(arguments.dropFirst()),
                options: ["token", "root", "key", "cert", "merchant-id", "at", "window-seconds"], flags: ["reveal"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument \(parsed.positionals[0])") }
            now = try CLIInput.date(parsed.value("at"))
            var window = SigningTimeWindow.default
            if let seconds = parsed.value("window-seconds") {
                guard let value = TimeInterval(seconds), value >= 0 else {
                    throw UsageError("--window-seconds must be a number of seconds")
                }
                window.maximumAge = value
            }
            let anchor = try trustAnchor(parsed.value("root"))
            let keys = try merchantKeys(parsed)
            if action == "decrypt" && keys.isEmpty { throw UsageError("decrypt needs at least one --key") }
            decryptor = PaymentTokenDecryptor(trustAnchor: anchor, keys: keys, window: window)
            let data = try CLIInput.read(try parsed.required("token"))
            do {
                token = try PaymentToken(json: data)
            } catch {
                io.out(errorJSON(error))
                return 1
            }
        } catch {
            return io.report(error, of: "orchard token", usage: usage, failure: 2)
        }
        do {
            if action == "verify" {
                let verification = try decryptor.verify(token, at: now)
                io.out(verificationJSON(verification, token: token))
            } else {
                let payment = try decryptor.decrypt(token, at: now)
                defer { payment.erase() }
                io.out(String(decoding: payment.json(revealing: parsed.flag("reveal")), as: UTF8.self))
            }
            return 0
        } catch {
            io.out(errorJSON(error))
            return 1
        }
    }

    static func trustAnchor(_ path: String?) throws -> TrustAnchor {
        if let path {
            let bytes = try CLIInput.read(path)
            return TrustAnchor(certificate: try X509Certificate.load([UInt8](bytes)))
        }
        let defaultPath = TrustAnchor.defaultAppleRootPath(environment: ProcessEnvironment.variables)
        guard FileManager.default.fileExists(atPath: defaultPath) else {
            throw UsageError(
                "no --root given and Apple's root is not at \(defaultPath) (run scripts/fetch-apple-root.sh or pass --root)"
            )
        }
        return try TrustAnchor.appleRoot(contentsOf: defaultPath)
    }

    static func merchantKeys(_ parsed: Arguments) throws -> [MerchantKey] {
        let keyPaths = parsed.values("key")
        let certificatePaths = parsed.values("cert")
        guard certificatePaths.count <= keyPaths.count else { throw UsageError("more --cert than --key options") }
        var keys: [MerchantKey] = []
        for (index, keyPath) in keyPaths.enumerated() {
            let keyPEM = try CLIInput.secret(keyPath)
            if index < certificatePaths.count {
                let certificate = try X509Certificate.load([UInt8](try CLIInput.read(certificatePaths[index])))
                keys.append(try MerchantKey(privateKey: try EVPKey(privateKeyPEM: keyPEM), certificate: certificate))
            } else {
                let key = try EVPKey(privateKeyPEM: keyPEM)
                guard let merchantID = parsed.value("merchant-id") ?? (key.kind == .rsa ? "" : nil) else {
                    throw UsageError("--key \(keyPath) has no --cert: give --merchant-id")
                }
                keys.append(try MerchantKey(privateKey: key, merchantIdentifier: merchantID))
            }
        }
        return keys
    }

    static func errorJSON(_ error: any Error) -> String {
        let code: String
        let message: String
        if let tokenError = error as? PaymentTokenError {
            code = tokenError.code.rawValue
            message = tokenError.reason.isEmpty ? tokenError.code.rawValue : tokenError.reason
        } else {
            code = "internal_error"
            message = "\(error)"
        }
        let value = JSONValue.object([
            JSONMember("error", .object([JSONMember("code", .string(code)), JSONMember("message", .string(message))]))
        ])
        return String(decoding: value.serialized, as: UTF8.self)
    }

    static func verificationJSON(_ verification: TokenVerification, token: PaymentToken) -> String {
        var members = [
            JSONMember("verified", .bool(true)),
            JSONMember("version", .string(verification.version.rawValue)),
            JSONMember("signingTime", .string(CLIInput.iso8601(verification.signingTime))),
            JSONMember("signer", .string(verification.signerSubject)),
            JSONMember("signerSerialNumber", .string(verification.signerSerialNumber)),
            JSONMember("intermediate", .string(verification.intermediateSubject)),
            JSONMember("root", .string(verification.rootSubject)),
            JSONMember("rootFingerprint", .string(verification.rootFingerprint)),
            JSONMember("transactionId", .string(token.transactionId)),
            JSONMember("publicKeyHash", .string(token.publicKeyHash)),
        ]
        if let applicationData = token.applicationData {
            members.append(JSONMember("applicationData", .string(applicationData)))
        }
        return String(decoding: JSONValue.object(members).serialized, as: UTF8.self)
    }
}

/// Reading the CLI's inputs.
enum CLIInput {
    /// The bytes of `path`, or standard input for "-".
    static func read(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        return data
    }

    /// The UTF-8 text of `path`.
    static func text(_ path: String) throws -> String { String(decoding: try read(path), as: UTF8.self) }

    /// The bytes of `path` (a key file) in a zeroing buffer; the buffer they were read into is zeroed.
    static func secret(_ path: String) throws -> SecureBytes {
        var data = try read(path)
        defer { data.resetBytes(in: 0..<data.count) }
        return SecureBytes(data)
    }

    /// An ISO 8601 date ("2026-06-01T12:00:00Z"), or now when nil.
    static func date(_ text: String?) throws -> Date {
        guard let text else { return Date() }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        throw UsageError("\(text) is not an ISO 8601 date such as 2026-06-01T12:00:00Z")
    }

    /// RFC 3339 in UTC, whole seconds.
    static func iso8601(_ date: Date) -> String { RFC3339.string(date) }

    /// Writes `text` to `path`, private (0600) when `secret`.
    static func write(_ text: String, to path: String, secret: Bool = false) throws {
        try write(Data(text.utf8), to: path, secret: secret)
    }

    /// Writes secret `bytes` (a private key) to `path`, private (0600), without another copy of them.
    static func write(_ bytes: SecureBytes, to path: String) throws {
        try bytes.withBorrowedData { try write($0, to: path, secret: true) }
    }

    /// Writes `data` to `path`, private (0600) when `secret`.
    static func write(_ data: Data, to path: String, secret: Bool = false) throws {
        let manager = FileManager.default
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        guard manager.createFile(atPath: path, contents: data, attributes: [.posixPermissions: secret ? 0o600 : 0o644])
        else { throw UsageError("cannot write \(path)") }
    }
}
