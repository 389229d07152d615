import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP
import OrchardJSON

extension GatewayAPI {
    /// The routes of the browser SDK: its files (by name and by versioned name, ``WebAssets/sdkResponse(_:for:)``),
    /// their integrity, and the payment request validator it calls.
    func mountWebRoutes(_ router: inout Router) {
        router.get("/sdk/v1/orchard.js", summary: "getOrchardJS") { request, _ in
            try WebAssets.shared.sdkResponse("orchard.js", for: request)
        }
        router.get("/sdk/v1/integrity.json", summary: "getSDKIntegrity") { _, _ in
            var response = Wire.response(WebAssets.shared.sdkIntegrity)
            response.headers["Access-Control-Allow-Origin"] = "*"
            return response
        }
        router.get("/sdk/v1/{file}", summary: "getSDKFile") { request, context in
            try WebAssets.shared.sdkResponse(try context.parameter("file"), for: request)
        }
        router.post(
            "/v1/payment-requests/validate", scope: .client, summary: "validatePaymentRequest",
            handler: endpoint(validatePaymentRequest))
    }

    /// `POST /v1/payment-requests/validate {payment_request, format?, merchant_identifier?, country_code?}`: the
    /// rules of ApplePayModel over HTTP, so the browser SDK refuses exactly what `orchard request validate`
    /// refuses. The answer is that command's report plus, for a valid request, the request in Apple Pay JS and
    /// W3C form (as `orchard request convert` writes them), the currency's exponent and the caller's address.
    func validatePaymentRequest(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let json = try body.json("payment_request", required: true) else {
            throw body.missing("payment_request")
        }
        var format: PaymentRequestFormat?
        if let name = try body.string("format", max: 20) {
            guard let named = PaymentRequestFormat(rawValue: name) else {
                throw body.invalid("format", "applepay-js, w3c or tappay-web")
            }
            format = named
        }
        let merchantIdentifier =
            try body.string("merchant_identifier", max: FieldLimits.merchantIdentifier.upperBound)
            ?? call.merchant.merchantIdentifiers.first
        let countryCode = try body.string("country_code", max: 2) ?? call.merchant.countryCode
        let validation: PaymentRequestValidation
        do {
            validation = try PaymentRequestValidator.validate(
                json: json, format: format, merchantIdentifier: merchantIdentifier, countryCode: countryCode)
        } catch {
            throw GatewayAPIError.make(
                .unprocessableContent, .invalidRequest, "payment_request_invalid", "not a payment request: \(error)",
                param: "payment_request")
        }
        var answer = validation.report.objectForWriting ?? [:]
        answer["format"] = validation.format.rawValue
        answer["client_ip"] = clientAddress(call.request) ?? ""
        if validation.isValid, var request = validation.request {
            if validation.format == .tapPayWeb, request.merchantCapabilities.isEmpty {
                request.merchantCapabilities = [.supports3DS]
            }
            for (key, shape) in [("apple_pay_request", PaymentRequestFormat.applePayJS), ("w3c_request", .w3c)] {
                answer[key] = PaymentRequestCoder.jsonValue(request, as: shape)
            }
            answer["currency_exponent"] = request.total.amount.currency.minorUnitExponent
            answer["amount_for_apple"] = validation.amountForApple?.decimalString
        }
        return Wire.response(answer)
    }
}
