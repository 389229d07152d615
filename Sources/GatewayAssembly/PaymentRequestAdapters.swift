import ApplePayModel
import Foundation
import Gateway

/// ISO 4217 from ApplePayModel's currency table: the product's ``CurrencyCatalog``.
public struct ISO4217Currencies: CurrencyCatalog {
    public init() {}

    public func numericCode(alphabetic: String) -> String? { (try? Currency(code: alphabetic))?.numericCode }

    public func alphabeticCode(numeric: String) -> String? { (try? Currency(numericCode: numeric))?.code }
}

/// ApplePayModel's `PaymentRequestValidator`: the product's ``PaymentRequestEvaluator``. An invalid request is
/// `payment_request_invalid` with the validator's issue codes in the reason.
public struct ApplePayRequestEvaluator: PaymentRequestEvaluator {
    public init() {}

    public func evaluate(
        paymentRequest json: Data, merchantIdentifier: String, countryCode: String?
    )
        throws(GatewayError) -> PaymentRequestTerms
    {
        let validation: PaymentRequestValidation
        do {
            validation = try PaymentRequestValidator.validate(
                json: json, merchantIdentifier: merchantIdentifier, countryCode: countryCode)
        } catch {
            throw GatewayError(.paymentRequestInvalid, "not a payment request: \(error)", param: "payment_request")
        }
        guard validation.isValid, let lifetime = validation.primeLifetimeSeconds else {
            throw GatewayError(
                .paymentRequestInvalid, "invalid payment request: \(validation.codes.joined(separator: ", "))",
                param: "payment_request")
        }
        var terms = PaymentRequestTerms(isDeferred: validation.isDeferred, primeLifetime: TimeInterval(lifetime))
        if !validation.isDeferred, validation.totalDisplay == .amount, let amount = validation.amountForApple,
            let minorUnits = try? amount.minorUnits
        {
            terms.totalAmount = minorUnits
            terms.totalCurrency = amount.currency.code
        }
        return terms
    }
}
