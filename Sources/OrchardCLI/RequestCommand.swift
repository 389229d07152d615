import ApplePayModel
import Foundation
import OrchardJSON

/// `orchard request validate|convert`: checks a payment request against Apple's and TapPay's rules,
/// or rewrites it in another JSON shape.
public enum RequestCommand {
    /// The `request` entry of the command table.
    static let command = CLI.Command(
        name: "request", summary: "validate a payment request, or convert it between applepay-js, w3c and tappay-web"
    ) { arguments, output in
        run(arguments, output: output)
    }

    static let usage = """
        usage: orchard request validate [--format applepay-js|w3c|tappay-web] [--merchant-identifier ID]
                                        [--country-code CC] FILE
               orchard request convert --to applepay-js|w3c|tappay-web [--format …] [--merchant-identifier ID]
                                       [--country-code CC] FILE

        FILE is a JSON payment request ('-' reads standard input); its shape is detected unless --format
        names it. validate prints {"valid", "errors", "total", "primeLifetimeSeconds"} and exits 0 when
        valid, 1 when invalid, 2 when the input cannot be read. convert prints the request in the --to
        shape (notes on what that shape cannot carry go to standard error) and exits 1 when it is invalid.
        """

    /// Runs `orchard request …` and returns the exit status.
    public static func run(_ arguments: [String], output: CLIOutput) -> Int32 {
        guard let subcommand = arguments.first, ["validate", "convert"].contains(subcommand) else {
            return output.unknownSubcommand(arguments, usage: usage)
        }
        let parsed: Arguments
        let format: PaymentRequestFormat?
        var target: PaymentRequestFormat?
        let file: String
        do throws(UsageError) {
            parsed = try Arguments(
                Array(arguments.dropFirst()), options: ["format", "merchant-identifier", "country-code", "to"],
                flags: [])
            if let name = parsed.value("format") {
                format = try formatNamed(name, option: "format")
            } else {
                format = nil
            }
            if subcommand == "convert" {
                target = try formatNamed(try parsed.required("to"), option: "to")
            } else if parsed.value("to") != nil {
                throw UsageError("--to belongs to convert")
            }
            guard parsed.positionals.count == 1 else { throw UsageError("give exactly one FILE") }
            file = parsed.positionals[0]
        } catch {
            return output.report(error, of: "orchard request", usage: usage)
        }
        let data: Data
        do {
            data = try readInput(file)
        } catch {
            output.err("orchard request: cannot read \(file): \(error.localizedDescription)")
            return 2
        }
        let validation: PaymentRequestValidation
        do {
            validation = try PaymentRequestValidator.validate(
                json: data, format: format, merchantIdentifier: parsed.value("merchant-identifier"),
                countryCode: parsed.value("country-code"))
        } catch {
            output.err("orchard request: \(file): \(error)")
            return 2
        }
        if let target {
            return convert(validation, to: target, output: output)
        }
        output.out(String(decoding: validation.report.sortedText(), as: UTF8.self))
        return validation.isValid ? 0 : 1
    }

    private static func formatNamed(_ text: String, option: String) throws(UsageError) -> PaymentRequestFormat {
        guard let format = PaymentRequestFormat(rawValue: text) else {
            throw UsageError("--\(option) must be applepay-js, w3c or tappay-web, not '\(text)'")
        }
        return format
    }

    private static func readInput(_ file: String) throws -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }

    private static func convert(
        _ validation: PaymentRequestValidation, to target: PaymentRequestFormat, output: CLIOutput
    ) -> Int32 {
        guard validation.isValid, var request = validation.request else {
            output.err("orchard request: the request is invalid; nothing converted")
            output.err(String(decoding: validation.report.sortedText(), as: UTF8.self))
            return 1
        }
        if validation.format == .tapPayWeb, target != .tapPayWeb, request.merchantCapabilities.isEmpty {
            request.merchantCapabilities = [.supports3DS]
            output.err("note: merchantCapabilities set to [\"supports3DS\"], as TapPay's SDK sets them")
        }
        if target == .w3c, request.merchantIdentifier == nil {
            output.err("note: the W3C form needs a merchant identifier; give --merchant-identifier")
        }
        for loss in PaymentRequestCoder.losses(converting: request, to: target) {
            output.err("note: \(target.rawValue) does not carry \(loss)")
        }
        output.out(String(decoding: PaymentRequestCoder.encode(request, as: target), as: UTF8.self))
        return 0
    }
}
