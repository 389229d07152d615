import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway certificate authority made with the `openssl` command in a temporary directory: it issues a TLS
/// server certificate for 127.0.0.1, client certificates, and signs certificate signing requests (standing in for
/// Apple when it signs the gateway's merchant identity CSR).
public final class TestCertificateAuthority: Sendable {
    /// Where the `openssl` command is, when installed.
    public static let opensslPath = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why a command of the authority failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The directory holding the files (removed by ``remove()``).
    public let directory: URL
    let openssl: String

    /// A new CA (`ca.pem`, `ca.key`, EC P-256, valid 2 days) and a server certificate for 127.0.0.1
    /// (`server.pem`, `server.key`).
    public init() throws {
        guard let openssl = Self.opensslPath else { throw Failure(description: "the openssl command is not installed") }
        self.openssl = openssl
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try write("server.ext", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try write("client.ext", "extendedKeyUsage=clientAuth\n")
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Orchard Test CA",
        ])
        try issue("server")
    }

    /// The path of the file `name` in ``directory``.
    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes a key (`NAME.key`, EC P-256) and a certificate (`NAME.pem`) for a client (`clientAuth`) or for the
    /// server (`name` "server": 127.0.0.1, `serverAuth`).
    public func issue(_ name: String) throws {
        try run([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(name).key", "-out",
            "\(name).csr", "-subj", "/CN=\(name)",
        ])
        try sign(csr: "\(name).csr", into: "\(name).pem", extensions: name == "server" ? "server.ext" : "client.ext")
    }

    /// Signs a PEM certificate signing request as a client certificate valid for `days`; returns the PEM.
    public func sign(csrPEM: String, days: Int = 2) throws -> String {
        let name = "csr-\(UUID().uuidString)"
        try write("\(name).csr", csrPEM)
        try sign(csr: "\(name).csr", into: "\(name).pem", extensions: "client.ext", days: days)
        return try String(contentsOfFile: path("\(name).pem"), encoding: .utf8)
    }

    /// A certificate signing request (PEM) for the private key in the PEM file at `privateKeyPath` (a key kept
    /// elsewhere, such as a conformance vector's, which stays where it is).
    public func csr(privateKeyPath: String) throws -> String {
        let name = "key-\(UUID().uuidString)"
        try run(["req", "-new", "-key", privateKeyPath, "-subj", "/CN=\(name)", "-out", "\(name).csr"])
        return try String(contentsOfFile: path("\(name).csr"), encoding: .utf8)
    }

    /// Signs a Payment Processing key's CSR as Apple does: the certificate carries extension
    /// 1.2.840.113635.100.6.32 with `merchantIdentifierHash` (the uppercase hex SHA-256 of the merchant
    /// identifier) as a UTF8String. Returns the PEM.
    public func signProcessing(csrPEM: String, merchantIdentifierHash: String, days: Int = 2) throws -> String {
        guard merchantIdentifierHash.count == 64, merchantIdentifierHash.allSatisfy(\.isHexDigit) else {
            throw Failure(description: "the merchant identifier hash is 64 hex digits")
        }
        let name = "processing-\(UUID().uuidString)"
        try write("\(name).ext", "1.2.840.113635.100.6.32=ASN1:UTF8String:\(merchantIdentifierHash)\n")
        try write("\(name).csr", csrPEM)
        try sign(csr: "\(name).csr", into: "\(name).pem", extensions: "\(name).ext", days: days)
        return try String(contentsOfFile: path("\(name).pem"), encoding: .utf8)
    }

    private func sign(csr: String, into output: String, extensions: String, days: Int = 2) throws {
        try run([
            "x509", "-req", "-in", csr, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", output,
            "-days", String(days), "-extfile", extensions,
        ])
    }

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    private func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? "") failed")
        }
    }

    /// Deletes the files.
    public func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// `Tests/Support/apple-pay-standin.py` running: a local HTTPS stand-in for Apple's merchant-session endpoint that
/// requires a client certificate issued by its CA. Stopped by ``stop()`` (or when released).
public final class ApplePayStandIn: Sendable {
    /// Where `python3` is, when installed.
    public static let pythonPath = ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The script.
    public static var scriptPath: String {
        TestPaths.packageRoot.appendingPathComponent("Tests/Support/apple-pay-standin.py").path
    }

    /// The CA whose server certificate it presents and whose client certificates it accepts.
    public let authority: TestCertificateAuthority
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// The file each answered body is appended to (one line each).
    public let recordPath: String
    private let script: StandInScript

    /// Starts the script with the CA's server certificate; `status` other than 200 makes it answer that error.
    public init(authority: TestCertificateAuthority, status: Int = 200) throws {
        self.authority = authority
        recordPath = authority.path("answers-\(UUID().uuidString).jsonl")
        script = try StandInScript(
            script: Self.scriptPath,
            arguments: [
                "--cert", authority.path("server.pem"), "--key", authority.path("server.key"),
                "--client-ca", authority.path("ca.pem"), "--status", String(status), "--record", recordPath,
            ], name: "stand-in")
        port = script.port
    }

    deinit { stop() }

    /// `host:port` for `--apple-pay-extra-validation-host`.
    public var hostAndPort: String { "127.0.0.1:\(port)" }

    /// The validation URL a browser would be given.
    public var validationURL: String { "https://127.0.0.1:\(port)/paymentservices/startSession" }

    /// Every body answered so far, as sent.
    public func answers() -> [Data] {
        guard let data = FileManager.default.contents(atPath: recordPath) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).map { Data($0) }
    }

    /// Stops the script.
    public func stop() { script.stop() }
}
