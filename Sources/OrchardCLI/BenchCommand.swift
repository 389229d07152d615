import ApplePaySandbox
import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto

/// `orchard bench token`: tokens verified and decrypted per second on one core, next to this machine's
/// bound measured in the same run with OpenSSL's own P-256 ECDH and ECDSA verification.
enum BenchCommand {
    static let command = CLI.Command(
        name: "bench", summary: "measure token verification+decryption against OpenSSL's P-256 bound (bench token)"
    ) { arguments, io in
        if arguments.first == "http" { return BenchHTTPCommand.run(Array(arguments.dropFirst()), io) }
        guard arguments.first == "token", !UsageError.asksForHelp(arguments) else {
            return io.unknownSubcommand(arguments, usage: usage)
        }
        do {
            let parsed = try Arguments(
                Array(arguments.dropFirst()), options: ["seconds", "rounds", "tokens", "loop"], flags: ["breakdown"])
            let seconds = Double(parsed.value("seconds") ?? "0.2") ?? 0.2
            let rounds = Int(parsed.value("rounds") ?? "20") ?? 20
            let count = Int(parsed.value("tokens") ?? "64") ?? 64
            guard seconds > 0, rounds > 0, count > 0 else {
                throw UsageError("--seconds, --rounds and --tokens must be positive")
            }
            if let loop = parsed.value("loop") {
                guard let iterations = Int(loop), iterations >= 0 else {
                    throw UsageError("--loop takes a count")
                }
                return try runFixedLoops(iterations: iterations, tokenCount: count, io: io)
            }
            return try runTokenBench(
                seconds: seconds, rounds: rounds, tokenCount: count, breakdown: parsed.flag("breakdown"), io: io)
        } catch {
            return io.report(error, of: "orchard bench")
        }
    }

    static let usage = """
        usage: orchard bench token [--seconds S] [--rounds N] [--tokens N] [--breakdown] [--loop N]
               orchard bench http [--clients N] [--duration S | --payments N] [--url URL --database D]
        """

    /// The bench's world: a sandbox PKI, a merchant key, minted tokens and a decryptor.
    struct Fixture {
        var now: Date
        var pki: SandboxPKI
        var merchantKey: EVPKey
        var key: MerchantKey
        var tokens: [Data]
        var decryptor: PaymentTokenDecryptor
    }

    static func makeFixture(tokenCount: Int) throws -> Fixture {
        let now = Date()
        let pki = try SandboxPKI.generate(
            notBefore: now.addingTimeInterval(-86400), notAfter: now.addingTimeInterval(86400))
        let merchantKey = try EVPKey.generateEC()
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: merchantKey.publicKeyPEM, merchantIdentifier: "merchant.com.orchard.bench",
            notBefore: now.addingTimeInterval(-86400), notAfter: now.addingTimeInterval(86400))
        let key = try MerchantKey(privateKeyPEM: try merchantKey.privateKeyPEM(), certificatePEM: certificate)
        let minter = TokenMinter(pki: pki)
        var tokens: [Data] = []
        for index in 0..<tokenCount {
            var request = MintRequest(merchantCertificatePEM: certificate, signingTime: now)
            request.amount = Int64(100 + index)
            tokens.append(try minter.mint(request))
        }
        let decryptor = PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [key])
        return Fixture(now: now, pki: pki, merchantKey: merchantKey, key: key, tokens: tokens, decryptor: decryptor)
    }

    /// `--loop N`: exactly N tokens, N ECDH derivations and N ECDSA verifications, each in its own
    /// function and untimed, for instruction counting (`valgrind --tool=callgrind`), which a shared
    /// machine's load does not disturb.
    static func runFixedLoops(iterations: Int, tokenCount: Int, io: CLIOutput) throws -> Int32 {
        let fixture = try makeFixture(tokenCount: tokenCount)
        let ecdh = try PreparedECDH(privateKey: fixture.merchantKey, peer: try EVPKey.generateEC())
        let verify = try PreparedVerify(key: fixture.pki.leafKey)
        // First sight of the certificate set, outside the loops.
        let warm = try PaymentToken(json: fixture.tokens[0])
        try fixture.decryptor.decrypt(warm, at: fixture.now).erase()
        let failures = loopTokens(iterations, fixture)
        loopECDH(iterations, ecdh)
        loopVerify(iterations, verify)
        io.out("loop: \(iterations) tokens (\(failures) failed), ECDH derivations, ECDSA verifications")
        return failures == 0 ? 0 : 1
    }

    @inline(never) static func loopTokens(_ iterations: Int, _ fixture: Fixture) -> Int {
        var failures = 0
        for index in 0..<iterations {
            do {
                let token = try PaymentToken(json: fixture.tokens[index % fixture.tokens.count])
                try fixture.decryptor.decrypt(token, at: fixture.now).erase()
            } catch {
                failures += 1
            }
        }
        return failures
    }

    @inline(never) fileprivate static func loopECDH(_ iterations: Int, _ ecdh: PreparedECDH) {
        for _ in 0..<iterations { ecdh.run() }
    }

    @inline(never) fileprivate static func loopVerify(_ iterations: Int, _ verify: PreparedVerify) {
        for _ in 0..<iterations { verify.run() }
    }

    static func runTokenBench(
        seconds: Double, rounds: Int, tokenCount: Int, breakdown: Bool, io: CLIOutput
    ) throws
        -> Int32
    {
        let fixture = try makeFixture(tokenCount: tokenCount)
        let (now, pki, merchantKey, key, tokens, decryptor) = (
            fixture.now, fixture.pki, fixture.merchantKey, fixture.key, fixture.tokens, fixture.decryptor
        )

        // OpenSSL's own operations, set up once as `openssl speed` does.
        let peer = try EVPKey.generateEC()
        let ecdh = try PreparedECDH(privateKey: merchantKey, peer: peer)
        let verify = try PreparedVerify(key: pki.leafKey)

        // The three measurements alternate in short slices, so that whatever else runs on this shared
        // machine weighs on all of them alike; the rates are totals over all slices.
        var ecdhTotal = Tally()
        var verifyTotal = Tally()
        var tokenTotal = Tally()
        var roundRatios: [Double] = []
        var failures = 0
        var tokenIndex = 0
        for _ in 0..<rounds {
            let ecdhSlice = timed(seconds: seconds) { ecdh.run() }
            let verifySlice = timed(seconds: seconds) { verify.run() }
            let tokenSlice = timed(seconds: seconds) {
                let json = tokens[tokenIndex % tokens.count]
                tokenIndex += 1
                do {
                    let token = try PaymentToken(json: json)
                    let payment = try decryptor.decrypt(token, at: now)
                    payment.erase()
                } catch {
                    failures += 1
                }
            }
            ecdhTotal.add(ecdhSlice)
            verifyTotal.add(verifySlice)
            tokenTotal.add(tokenSlice)
            roundRatios.append(tokenSlice.rate / (1 / (1 / ecdhSlice.rate + 1 / verifySlice.rate)))
        }
        guard failures == 0 else {
            io.err("orchard bench: \(failures) tokens failed to verify or decrypt")
            return 1
        }
        let tokensPerSecond = tokenTotal.rate
        let ecdhPerSecond = ecdhTotal.rate
        let verifyPerSecond = verifyTotal.rate
        let bound = 1 / (1 / ecdhPerSecond + 1 / verifyPerSecond)
        let ratio = tokensPerSecond / bound
        let sortedRatios = roundRatios.sorted()
        io.out(
            "token bench: EC_v1 tokens (\(tokenCount) distinct), verify + decrypt, one thread, \(rounds) rounds of 3 × \(seconds) s"
        )
        io.out("  OpenSSL \(String(cString: orchard_openssl_version_text()))")
        io.out(
            "  P-256 ECDH (EVP_PKEY_derive):        \(format(ecdhPerSecond)) op/s   (\(format(1e6 / ecdhPerSecond)) µs)"
        )
        io.out(
            "  P-256 ECDSA verify (EVP_PKEY_verify): \(format(verifyPerSecond)) op/s   (\(format(1e6 / verifyPerSecond)) µs)"
        )
        io.out("  bound 1/(t_ecdh + t_verify):         \(format(bound)) tokens/s   (\(format(1e6 / bound)) µs)")
        io.out(
            "  orchard verify+decrypt:              \(format(tokensPerSecond)) tokens/s   (\(format(1e6 / tokensPerSecond)) µs)"
        )
        io.out(
            "  per-round ratio: min \(String(format: "%.2f", sortedRatios.first!)), median \(String(format: "%.2f", sortedRatios[sortedRatios.count / 2])), max \(String(format: "%.2f", sortedRatios.last!))"
        )
        if breakdown {
            try BenchBreakdown.run(
                tokens: tokens, leafPEM: pki.leaf.pem, decryptor: decryptor, key: key, now: now, seconds: seconds,
                io: io)
        }
        io.out("tokens_per_second=\(Int(tokensPerSecond.rounded()))")
        io.out("bound_tokens_per_second=\(Int(bound.rounded()))")
        io.out("bound_ratio=\(String(format: "%.2f", ratio))")
        return 0
    }

    static func format(_ value: Double) -> String { String(format: value >= 100 ? "%.0f" : "%.1f", value) }

    /// Calls and elapsed time.
    struct Tally {
        var calls = 0
        var nanoseconds: UInt64 = 0
        var rate: Double { Double(calls) / (Double(max(nanoseconds, 1)) / 1e9) }
        mutating func add(_ other: Tally) {
            calls += other.calls
            nanoseconds += other.nanoseconds
        }
    }

    /// Runs `body` `warmUp` times, then in batches of `batch` calls until about `seconds` have passed;
    /// returns the timed calls and their time.
    static func timed(seconds: Double, warmUp: Int = 4, batch: Int = 8, _ body: () -> Void) -> Tally {
        for _ in 0..<warmUp { body() }
        let start = DispatchTime.now().uptimeNanoseconds
        let limit = UInt64(seconds * 1e9)
        var calls = 0
        var elapsed: UInt64 = 0
        repeat {
            for _ in 0..<batch { body() }
            calls += batch
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        } while elapsed < limit
        return Tally(calls: calls, nanoseconds: elapsed)
    }

    /// Runs `body` repeatedly for about `seconds`; returns calls per second.
    static func measure(seconds: Double, _ body: () -> Void) -> Double {
        let tally = timed(seconds: seconds, warmUp: 8, batch: 16, body)
        return Double(tally.calls) / (Double(tally.nanoseconds) / 1e9)
    }
}

/// An ECDH derivation set up once; each run derives the shared secret again.
private final class PreparedECDH {
    let context: OpaquePointer
    let keys: [EVPKey]
    var secret = [UInt8](repeating: 0, count: 32)

    init(privateKey: EVPKey, peer: EVPKey) throws {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, privateKey.pointer, nil),
            EVP_PKEY_derive_init(context) == 1,
            EVP_PKEY_derive_set_peer(context, peer.pointer) == 1
        else { throw CryptoError.openSSL("ECDH setup") }
        self.context = context
        self.keys = [privateKey, peer]
    }
    deinit { EVP_PKEY_CTX_free(context) }

    func run() {
        var length = secret.count
        guard EVP_PKEY_derive(context, &secret, &length) == 1 else { fatalError("ECDH failed") }
    }
}

/// An ECDSA P-256 verification of a SHA-256 digest, set up once.
private final class PreparedVerify {
    let context: OpaquePointer
    let key: EVPKey
    let digest: [UInt8]
    let signature: [UInt8]

    init(key: EVPKey) throws {
        digest = OrchardCrypto.SHA256.hash(Array("orchard bench".utf8))
        guard let signing = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw CryptoError.openSSL("sign setup")
        }
        defer { EVP_PKEY_CTX_free(signing) }
        var length = 0
        guard EVP_PKEY_sign_init(signing) == 1, EVP_PKEY_sign(signing, nil, &length, digest, digest.count) == 1 else {
            throw CryptoError.openSSL("sign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(signing, &signature, &length, digest, digest.count) == 1 else {
            throw CryptoError.openSSL("sign")
        }
        self.signature = Array(signature.prefix(length))
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil), EVP_PKEY_verify_init(context) == 1 else {
            throw CryptoError.openSSL("verify setup")
        }
        self.context = context
        self.key = key
    }
    deinit { EVP_PKEY_CTX_free(context) }

    func run() {
        guard EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1 else {
            fatalError("verify failed")
        }
    }
}
