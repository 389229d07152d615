import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly

/// `orchard sandbox mint --database sqlite:PATH [--amount 12.34 --currency TWD] [--pan …]`: a token for the
/// sandbox merchant's active processing certificate, signed by the sandbox PKI `orchard serve` trusts.
/// `orchard sandbox mint` hands over here when `--database` is given.
enum SandboxDatabaseMint {
    static let usage = """
        usage: orchard sandbox mint --database sqlite:PATH|postgres://… [--amount 12.34] [--currency TWD] [--pan DIGITS]
                                    [--network Visa] [--type credit] [--master-key HEX]

        Prints an Apple Pay token (the {paymentData, paymentMethod, transactionIdentifier} JSON) encrypted for
        the sandbox merchant's active processing certificate and signed now by the database's sandbox PKI.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        guard arguments.first == "mint" else {
            return io.unknownSubcommand(arguments, usage: usage, command: "orchard sandbox")
        }
        let parsed: Arguments
        do {
            parsed = try Arguments.parse(
                Array(arguments.dropFirst()),
                options: ["database", "amount", "currency", "pan", "network", "type", "master-key"])
        } catch {
            return io.report(error, of: "orchard sandbox mint", usage: usage, failure: nil)
        }
        do {
            var options = try GatewayDatabase.options(try parsed.required("database"))
            options.auditActor = CLI.auditActor("sandbox", arguments)
            let currency = try Currency(code: parsed.value("currency") ?? "TWD")
            let amount = try Money(parsed.value("amount") ?? "100", currency: currency).minorUnits
            options.masterKeyHex = parsed.masterKeyHex
            let runtime = try GatewayRuntime(options)
            let token = try runtime.mintSandboxToken(
                amount: amount, currency: currency, pan: parsed.value("pan"),
                network: parsed.value("network") ?? "Visa", type: parsed.value("type") ?? "credit")
            io.out(String(decoding: token, as: UTF8.self))
            return 0
        } catch {
            return io.report(error, of: "orchard sandbox mint")
        }
    }
}
