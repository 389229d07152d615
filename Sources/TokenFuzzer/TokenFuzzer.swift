// A libFuzzer target over token parsing, CMS verification and decryption.
//
//   swift build --product TokenFuzzer && .build/debug/TokenFuzzer --write-corpus fuzz
//   swift build -c release --product TokenFuzzer --build-path .build-fuzz \
//       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DORCHARD_LIBFUZZER
//   ORCHARD_FUZZ_WORLD=fuzz/world .build-fuzz/release/TokenFuzzer fuzz/corpus -max_total_time=60
//
// scripts/fuzz-tokens.sh does all three (the CI campaign and the long one, docs/tokens.md).
//
// Built normally (without ORCHARD_LIBFUZZER) it replays files through the same entry point, and
// `--write-corpus DIR` writes a world (sandbox PKI, merchant keys, the genuine tokens) to DIR/world and
// minted seed tokens to DIR/corpus. Without ORCHARD_FUZZ_WORLD the world is generated afresh.
// ORCHARD_FUZZ_VECTORS names a directory of real tokens with their keys (a `manifest.json` as in the shared
// conformance vectors): each becomes a lane of its own, checked at its vector's time against Apple's root.
//
// Every input is parsed, verified and decrypted in the lane its publicKeyHash names, and decrypted once
// more without verification. A crash, a hang, or either of these is a finding:
//   - a token is verified whose signed content, signature value, signed attributes or certificates are not
//     one of the lane's genuine tokens' (a mutated signature accepted). The CMS envelope around them is
//     compared as what it binds (`SignatureCore`): what no signature covers (the versions, the digest
//     algorithm set, BER's encoding choices) may change without a forgery; what names the signer and the
//     algorithms must still be exact (the decryptor's own checks refuse them otherwise);
//   - a token verified with the lane's chains cached is refused by a decryptor that has seen nothing;
//   - a ciphertext or key that is not a genuine token's decrypts (AES-GCM accepted a mutated message);
//   - an input takes more than 1 s of CPU time (libFuzzer's wall-clock `-timeout` backs it up).
import ApplePaySandbox
import ApplePayToken
import Foundation
import OrchardCrypto
import OrchardTestSupport

/// The fixed world every input is checked in: lanes of a trust anchor, merchant keys and a "now", each with
/// the tokens that are genuinely signed in it.
enum FuzzWorld {
    static let now = Date(timeIntervalSince1970: 1_780_272_000)
    static let merchantID = "merchant.com.orchard.fuzz"

    /// What a genuine token is: its signature (as what it binds) over its signed content.
    struct Signed: Hashable {
        var signature: SignatureCore
        var content: [UInt8]

        /// `token`'s, nil when its signature has no single SignerInfo.
        init?(_ token: PaymentToken) {
            guard let core = try? CMSSignedData(der: token.signature, context: ParsingContext.shared).signatureCore
            else { return nil }
            signature = core
            content = token.signedContent
        }
    }

    /// What a genuine token's encryption is: its key material and ciphertext.
    struct Sealed: Hashable {
        var keyMaterial: [UInt8]
        var ciphertext: [UInt8]
    }

    /// A trust anchor with its merchant keys, the time tokens are checked at, and the genuine tokens.
    struct Lane: @unchecked Sendable {
        let name: String
        let decryptor: PaymentTokenDecryptor
        let keyHashes: Set<[UInt8]>
        let at: Date
        var signed: Set<Signed> = []
        var sealed: Set<Sealed> = []

        mutating func admit(_ json: Data) throws {
            let token = try PaymentToken(json: json)
            _ = try decryptor.decrypt(token, at: at)
            signed.insert(Signed(token)!)
            sealed.insert(Sealed(keyMaterial: token.keyMaterial, ciphertext: token.ciphertext))
        }
    }

    /// The sandbox world's generated parts, for writing a corpus.
    struct Sandbox: Sendable {
        let pki: SandboxPKI
        let certificates: [String]
        let keyPEMs: [SecureBytes]
    }

    static let sandbox: Sandbox = {
        if let directory = ProcessInfo.processInfo.environment["ORCHARD_FUZZ_WORLD"] {
            return try! loadSandbox(from: URL(fileURLWithPath: directory))
        }
        let start = now.addingTimeInterval(-86400)
        let end = now.addingTimeInterval(86400)
        let pki = try! SandboxPKI.generate(notBefore: start, notAfter: end)
        var certificates: [String] = []
        var keyPEMs: [SecureBytes] = []
        for key in [try! EVPKey.generateEC(), try! EVPKey.generateRSA()] {
            keyPEMs.append(try! key.privateKeyPEM())
            certificates.append(
                try! pki.issueMerchantCertificate(
                    publicKeyPEM: key.publicKeyPEM, merchantIdentifier: merchantID, notBefore: start, notAfter: end))
        }
        return Sandbox(pki: pki, certificates: certificates, keyPEMs: keyPEMs)
    }()

    static let lanes: [Lane] = {
        var sandboxLane = try! lane(
            name: "sandbox", anchor: sandbox.pki.trustAnchor,
            keys: zip(sandbox.keyPEMs, sandbox.certificates).map {
                try MerchantKey(privateKeyPEM: $0, certificatePEM: $1)
            }, at: now)
        for json in genuineSandboxTokens() { try! sandboxLane.admit(json) }
        var lanes = [sandboxLane]
        if let directory = ProcessInfo.processInfo.environment["ORCHARD_FUZZ_VECTORS"], !directory.isEmpty {
            lanes += vectorLanes(URL(fileURLWithPath: directory))
        }
        return lanes
    }()

    static func lane(name: String, anchor: TrustAnchor, keys: [MerchantKey], at: Date) throws -> Lane {
        Lane(
            name: name, decryptor: PaymentTokenDecryptor(trustAnchor: anchor, keys: keys),
            keyHashes: Set(keys.map(\.publicKeyHashBytes)), at: at)
    }

    static func loadSandbox(from url: URL) throws -> Sandbox {
        let pki = try SandboxPKI(directory: url)
        var certificates: [String] = []
        var keyPEMs: [SecureBytes] = []
        for name in ["ec", "rsa"] {
            keyPEMs.append(try SecureBytes(contentsOf: url.appendingPathComponent("merchant-\(name).key")))
            certificates.append(
                try String(contentsOf: url.appendingPathComponent("merchant-\(name).pem"), encoding: .utf8))
        }
        return Sandbox(pki: pki, certificates: certificates, keyPEMs: keyPEMs)
    }

    /// The world's genuine tokens: those written with it, else minted now.
    static func genuineSandboxTokens() -> [Data] {
        if let directory = ProcessInfo.processInfo.environment["ORCHARD_FUZZ_WORLD"] {
            let genuine = URL(fileURLWithPath: directory).appendingPathComponent("genuine")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: genuine.path)) ?? []
            return names.sorted().compactMap { try? Data(contentsOf: genuine.appendingPathComponent($0)) }
        }
        return try! mintSeeds()
    }

    /// EC_v1 and RSA_v1 tokens, with and without applicationData, minted by the sandbox world.
    static func mintSeeds() throws -> [Data] {
        let minter = TokenMinter(pki: sandbox.pki)
        var seeds: [Data] = []
        for (index, certificate) in sandbox.certificates.enumerated() {
            for applicationData in [nil, "00112233445566778899aabbccddeeff"] as [String?] {
                var request = MintRequest(
                    version: index == 0 ? .ecV1 : .rsaV1, merchantCertificatePEM: certificate, signingTime: now)
                request.applicationData = applicationData
                seeds.append(try minter.mint(request))
            }
        }
        return seeds
    }

    /// One lane per vector of `directory/manifest.json` whose key loads and whose token verifies.
    static func vectorLanes(_ directory: URL) -> [Lane] {
        guard let anchor = try? ConformanceVector.appleRoot(in: directory) else { return [] }
        return ConformanceVector.all(in: directory).compactMap { vector in
            guard let key = try? vector.merchantKey(),
                var lane = try? lane(name: vector.id, anchor: anchor, keys: [key], at: vector.verifyAt),
                let json = try? vector.tokenData(), (try? lane.admit(json)) != nil
            else { return nil }
            return lane
        }
    }

    /// Runs one input: any outcome but a crash, a hang or an accepted forgery is fine.
    @discardableResult
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let token: PaymentToken
        do { token = try PaymentToken(json: Data(bytes)) } catch { return "rejected: \(error.code.rawValue)" }
        let lane = lanes.first { $0.keyHashes.contains(token.publicKeyHashBytes) } ?? lanes[0]
        // `decrypt` is `verify` then `decryptUnverified`: each runs once here, the decryption whatever the
        // verification said, as a forged signature would reach it.
        let verification: Result<TokenVerification, PaymentTokenError>
        do { verification = .success(try lane.decryptor.verify(token, at: lane.at)) } catch {
            verification = .failure(error)
        }
        var decrypted = false
        if let payment = try? lane.decryptor.decryptUnverified(token) {
            // Only a genuine message opens.
            guard lane.sealed.contains(Sealed(keyMaterial: token.keyMaterial, ciphertext: token.ciphertext)) else {
                fatalError("finding: a mutated ciphertext or key decrypted in lane \(lane.name)")
            }
            precondition(payment.primaryAccountNumberBytes.withUnsafeBytes { $0.allSatisfy { (0x30...0x39).contains($0) } })
            _ = payment.json(revealing: false)
            payment.erase()
            decrypted = true
        }
        switch verification {
        case .success:
            guard let signed = Signed(token), lane.signed.contains(signed) else {
                fatalError("finding: a mutated signature or signed content was accepted in lane \(lane.name)")
            }
            // The lane's decryptor has its chains cached; one that has seen nothing decides the same.
            let fresh = PaymentTokenDecryptor(trustAnchor: lane.decryptor.trustAnchor, keys: lane.decryptor.keys)
            guard (try? fresh.verify(token, at: lane.at)) != nil else {
                fatalError("finding: a token was accepted only with its certificates cached in lane \(lane.name)")
            }
            return decrypted ? "accepted (\(lane.name))" : "verified, not decrypted (\(lane.name))"
        case .failure(let error):
            return "rejected: \(error.code.rawValue)"
        }
    }

    /// Writes the world to `root/world` (with its genuine tokens in `root/world/genuine`) and the seed
    /// tokens to `root/corpus`.
    static func writeCorpus(to root: String) throws {
        let worldDirectory = URL(fileURLWithPath: root).appendingPathComponent("world")
        try sandbox.pki.write(to: worldDirectory)
        for (index, name) in ["ec", "rsa"].enumerated() {
            try sandbox.keyPEMs[index].withBorrowedData {
                try $0.write(to: worldDirectory.appendingPathComponent("merchant-\(name).key"))
            }
            try Data(sandbox.certificates[index].utf8).write(
                to: worldDirectory.appendingPathComponent("merchant-\(name).pem"))
        }
        let genuine = worldDirectory.appendingPathComponent("genuine")
        let corpus = URL(fileURLWithPath: root).appendingPathComponent("corpus")
        for directory in [genuine, corpus] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        for (index, seed) in try mintSeeds().enumerated() {
            try seed.write(to: genuine.appendingPathComponent("seed-\(index).json"))
            try seed.write(to: corpus.appendingPathComponent("seed-\(index).json"))
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

    @_silgen_name("LLVMFuzzerMutate")
    func LLVMFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int) -> Int

    /// Structure-aware mutation: most of the time one base64 or hex field of the token is decoded, its bytes
    /// mutated by libFuzzer, and encoded again, so the mutants reach the CMS parser, the certificate checks
    /// and the decryption instead of dying in the base64 decoder; otherwise the JSON text itself is mutated.
    @_cdecl("LLVMFuzzerCustomMutator")
    public func tokenFuzzerCustomMutator(
        _ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: CUnsignedInt
    ) -> Int {
        guard let data else { return 0 }
        if seed % 4 != 0, let mutant = TokenMutator.mutateField(Data(bytes: data, count: size), seed: seed),
            mutant.count <= maxSize
        {
            mutant.copyBytes(to: data, count: mutant.count)
            return mutant.count
        }
        return LLVMFuzzerMutate(data, size, maxSize)
    }

    enum TokenMutator {
        static let base64Fields = ["data", "signature", "ephemeralPublicKey", "wrappedKey", "publicKeyHash"]
        static let hexFields = ["transactionId", "applicationData"]

        static func mutateField(_ json: Data, seed: CUnsignedInt) -> Data? {
            guard var root = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
            let nested = root["paymentData"] is [String: Any]
            var paymentData = (nested ? root["paymentData"] : root) as? [String: Any] ?? [:]
            var header = paymentData["header"] as? [String: Any] ?? [:]
            let names = (base64Fields + hexFields).filter { paymentData[$0] is String || header[$0] is String }
            guard !names.isEmpty else { return nil }
            let name = names[Int(seed / 4) % names.count]
            let inHeader = paymentData[name] == nil
            guard let text = (inHeader ? header[name] : paymentData[name]) as? String else { return nil }
            let isHex = hexFields.contains(name)
            guard var bytes = isHex ? Hex.decode(text) : Data(base64Encoded: text).map(Array.init) else {
                return nil
            }
            let capacity = bytes.count * 2 + 64
            let count = bytes.count
            bytes += [UInt8](repeating: 0, count: capacity - count)
            let size = bytes.withUnsafeMutableBufferPointer { LLVMFuzzerMutate($0.baseAddress, count, capacity) }
            let mutated = Array(bytes.prefix(size))
            let encoded = isHex ? Hex.encode(mutated) : Data(mutated).base64EncodedString()
            if inHeader { header[name] = encoded } else { paymentData[name] = encoded }
            if !header.isEmpty { paymentData["header"] = header }
            if nested { root["paymentData"] = paymentData } else { root = paymentData }
            return try? JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])
        }
    }

    /// SwiftPM links executables with their entry point renamed to `<target>_main`; hand over to libFuzzer.
    @_cdecl("TokenFuzzer_main")
    func tokenFuzzerMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        // Build the world (and check its genuine tokens) before the first input, not inside its time limit.
        print("TokenFuzzer: \(FuzzWorld.lanes.count) lane(s): \(FuzzWorld.lanes.map(\.name).joined(separator: ", "))")
        var count = argc
        var arguments = argv
        atexit {
            print(
                String(
                    format: "TokenFuzzer: slowest input %.3f ms CPU, %.3f ms wall",
                    Double(SlowestInput.cpu) / 1e6, Double(SlowestInput.wall) / 1e6))
        }
        return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
            let wallStart = DispatchTime.now().uptimeNanoseconds
            let cpuStart = SlowestInput.threadCPUNanoseconds()
            let result = tokenFuzzerTestOneInput(data, size)
            let cpu = SlowestInput.threadCPUNanoseconds() - cpuStart
            SlowestInput.cpu = max(SlowestInput.cpu, cpu)
            SlowestInput.wall = max(SlowestInput.wall, DispatchTime.now().uptimeNanoseconds - wallStart)
            if cpu > SlowestInput.limit {
                fatalError("finding: an input took \(cpu / 1_000_000) ms of CPU time, over the limit of 1 s")
            }
            return result
        }
    }

    /// The longest one input took in this process, printed at exit (libFuzzer's own figure is whole seconds of
    /// wall time), and the limit: 1 s of the thread's CPU time. Wall time on a shared machine also counts the
    /// time other processes had the CPU, so libFuzzer's own `-timeout` is only the backstop for an input that
    /// blocks (scripts/fuzz-tokens.sh).
    enum SlowestInput {
        nonisolated(unsafe) static var cpu: UInt64 = 0
        nonisolated(unsafe) static var wall: UInt64 = 0
        static let limit: UInt64 = 1_000_000_000

        static func threadCPUNanoseconds() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
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
