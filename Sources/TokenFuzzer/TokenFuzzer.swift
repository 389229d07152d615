// A libFuzzer target over token parsing, CMS handling and decryption.
//
//   swift build --product TokenFuzzer && .build/debug/TokenFuzzer --write-corpus fuzz
//   swift build -c release --product TokenFuzzer --build-path .build-fuzz \
//       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DORCHARD_LIBFUZZER
//   ORCHARD_FUZZ_WORLD=fuzz/world .build-fuzz/release/TokenFuzzer fuzz/corpus -max_total_time=60
//
// Built normally (without ORCHARD_LIBFUZZER) it replays files through the same entry point, and
// `--write-corpus DIR` writes a world (sandbox PKI, merchant keys) to DIR/world and minted seed tokens
// to DIR/corpus. Without ORCHARD_FUZZ_WORLD the world is generated afresh and only parsing is reached.
import ApplePaySandbox
import ApplePayToken
import Foundation
import OrchardCrypto

/// The fixed world every input is checked in: a sandbox PKI, an EC and an RSA merchant key, a fixed "now".
enum FuzzWorld {
    static let now = Date(timeIntervalSince1970: 1_780_272_000)
    static let merchantID = "merchant.com.orchard.fuzz"

    struct World: Sendable {
        let pki: SandboxPKI
        let decryptor: PaymentTokenDecryptor
        let certificates: [String]
        let keyPEMs: [SecureBytes]
    }

    static let world: World = {
        if let directory = ProcessInfo.processInfo.environment["ORCHARD_FUZZ_WORLD"] {
            return try! load(from: directory)
        }
        let start = now.addingTimeInterval(-86400)
        let end = now.addingTimeInterval(86400)
        let pki = try! SandboxPKI.generate(notBefore: start, notAfter: end)
        var keys: [MerchantKey] = []
        var certificates: [String] = []
        var keyPEMs: [SecureBytes] = []
        for key in [try! EVPKey.generateEC(), try! EVPKey.generateRSA()] {
            keyPEMs.append(try! key.privateKeyPEM())
            let certificate = try! pki.issueMerchantCertificate(
                publicKeyPEM: key.publicKeyPEM, merchantIdentifier: merchantID, notBefore: start, notAfter: end)
            keys.append(try! MerchantKey(privateKeyPEM: keyPEMs.last!, certificatePEM: certificate))
            certificates.append(certificate)
        }
        return World(
            pki: pki, decryptor: PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: keys),
            certificates: certificates,
            keyPEMs: keyPEMs)
    }()

    static func load(from directory: String) throws -> World {
        let url = URL(fileURLWithPath: directory)
        let pki = try SandboxPKI(directory: url)
        var keys: [MerchantKey] = []
        var certificates: [String] = []
        var keyPEMs: [SecureBytes] = []
        for name in ["ec", "rsa"] {
            let keyPEM = try SecureBytes(contentsOf: url.appendingPathComponent("merchant-\(name).key"))
            let certificate = try String(
                contentsOf: url.appendingPathComponent("merchant-\(name).pem"), encoding: .utf8)
            keys.append(try MerchantKey(privateKeyPEM: keyPEM, certificatePEM: certificate))
            certificates.append(certificate)
            keyPEMs.append(keyPEM)
        }
        return World(
            pki: pki, decryptor: PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: keys),
            certificates: certificates,
            keyPEMs: keyPEMs)
    }

    /// Runs one input: any outcome but a crash, a hang or an accepted forgery is fine.
    @discardableResult
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        do {
            let token = try PaymentToken(json: Data(bytes))
            _ = try? world.decryptor.verify(token, at: now)
            let payment = try world.decryptor.decrypt(token, at: now)
            // Only tokens minted by this world's PKI can decrypt; their data is well-formed.
            precondition(payment.applicationPrimaryAccountNumber.allSatisfy(\.isNumber))
            _ = payment.json(revealing: false)
            payment.erase()
            return "accepted"
        } catch {
            return "rejected: \(error.code.rawValue)"
        }
    }

    /// Seed tokens: EC_v1 and RSA_v1, with and without applicationData.
    static func writeCorpus(to root: String) throws {
        let worldDirectory = URL(fileURLWithPath: root).appendingPathComponent("world")
        try world.pki.write(to: worldDirectory)
        for (index, name) in ["ec", "rsa"].enumerated() {
            try world.keyPEMs[index].withBorrowedData {
                try $0.write(to: worldDirectory.appendingPathComponent("merchant-\(name).key"))
            }
            try Data(world.certificates[index].utf8).write(
                to: worldDirectory.appendingPathComponent("merchant-\(name).pem"))
        }
        let directory = (root as NSString).appendingPathComponent("corpus")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let minter = TokenMinter(pki: world.pki)
        for (index, certificate) in world.certificates.enumerated() {
            for applicationData in [nil, "00112233445566778899aabbccddeeff"] as [String?] {
                var request = MintRequest(
                    version: index == 0 ? .ecV1 : .rsaV1, merchantCertificatePEM: certificate, signingTime: now)
                request.applicationData = applicationData
                let path = (directory as NSString).appendingPathComponent(
                    "seed-\(index)-\(applicationData == nil ? 0 : 1).json")
                try minter.mint(request).write(to: URL(fileURLWithPath: path))
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func tokenFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzWorld.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}

#if ORCHARD_LIBFUZZER
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links executables with their entry point renamed to `<target>_main`; hand over to libFuzzer.
    @_cdecl("TokenFuzzer_main")
    func tokenFuzzerMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments) { data, size in tokenFuzzerTestOneInput(data, size) }
    }
#else
    @main
    struct CorpusReplay {
        static func main() throws {
            var arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "--write-corpus", arguments.count == 2 {
                try FuzzWorld.writeCorpus(to: arguments[1])
                return
            }
            if arguments.isEmpty { arguments = ["-"] }
            for path in arguments {
                let data =
                    path == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
                let outcome = data.withUnsafeBytes { FuzzWorld.run($0.bindMemory(to: UInt8.self)) }
                print("\(path): \(outcome)")
            }
        }
    }
#endif
