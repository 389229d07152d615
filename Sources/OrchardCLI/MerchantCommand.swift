import Foundation
import Gateway

/// `orchard merchant show --database sqlite:PATH [--json]`: the sandbox merchant's ids, keys (retrievable in
/// sandbox), merchant identifier and active processing certificate.
enum MerchantCommand {
    static let command = CLI.Command(name: "merchant", summary: "show the sandbox merchant's ids, keys and certificate")
    {
        arguments, io in
        run(arguments, io)
    }

    static let usage = """
        usage: orchard merchant show --database sqlite:PATH|postgres://… [--json] [--master-key HEX]

        Prints merchant_id, app_id, app_key, secret_key (sandbox keys stay retrievable locally),
        merchant_identifier and the active processing certificate (PEM). Provisions the sandbox merchant if the
        database has none yet. The master key comes from --master-key, ORCHARD_MASTER_KEY or <database>.master-key;
        an existing database whose key file is missing is refused (master_key_missing), never given a new key.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        guard arguments.first == "show" else {
            if UsageError.asksForHelp(arguments) {
                io.out(usage)
                return 0
            }
            io.err(arguments.first.map { "orchard merchant: unknown subcommand '\($0)'\n\n\(usage)" } ?? usage)
            return arguments.first == nil ? 0 : 2
        }
        let parsed: Arguments
        let database: GatewayRuntime.Options
        do {
            parsed = try Arguments(
                Array(arguments.dropFirst()), options: ["database", "master-key"], flags: ["json", "help"])
            if parsed.flag("help") {
                io.out(usage)
                return 0
            }
            database = try GatewayDatabase.options(parsed.value("database") ?? "sqlite:./orchard.db")
        } catch {
            io.err("orchard merchant show: \(error)\n\n\(usage)")
            return 2
        }
        do {
            var options = database
            options.masterKeyHex =
                parsed.value("master-key") ?? ProcessInfo.processInfo.environment["ORCHARD_MASTER_KEY"]
            let runtime = try GatewayRuntime(options)
            guard let merchant = runtime.sandboxMerchant else {
                io.err("orchard merchant show: no sandbox merchant")
                return 1
            }
            let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
            let certificate = try runtime.gateway.merchants.processingCertificates(merchantID: merchant.id)
                .last { $0.active }?.certificatePEM
            let fields: [(String, Any)] = [
                ("merchant_id", merchant.id), ("app_id", credentials.appID), ("app_key", credentials.appKey),
                ("secret_key", credentials.secretKey),
                ("merchant_identifier", merchant.merchantIdentifiers.first ?? ""),
                ("processing_certificate_pem", certificate ?? NSNull()),
            ]
            if parsed.flag("json") {
                let object = Dictionary(uniqueKeysWithValues: fields)
                // CLI output (`--json`), pretty printed: not request handling.
                let data = try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
                io.out(String(decoding: data, as: UTF8.self))
            } else {
                for (name, value) in fields.dropLast() { io.out("\(name): \(value)") }
                io.out("processing_certificate_pem:\n\(certificate ?? "(none)")")
            }
            return 0
        } catch {
            io.err("orchard merchant show: \(error)")
            return 1
        }
    }
}
