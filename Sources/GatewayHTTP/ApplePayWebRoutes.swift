import Foundation
import Gateway
import OrchardJSON
import OrchardHTTP

/// The routes of Apple Pay on the Web: merchant validation, the merchant identity, the domains and the domain
/// association file (`openapi.yaml`, tag "Apple Pay on the Web").
extension GatewayAPI {
    /// The path Apple reads the domain association file from.
    public static let domainAssociationPath = "/.well-known/apple-developer-merchantid-domain-association"

    /// The media types `POST /v1/merchant-identity/certificate` takes besides JSON: Apple's `.cer` as sent.
    static let certificateMediaTypes: Set<String> = [
        "application/json", "application/pkix-cert", "application/x-x509-ca-cert", "application/x-pem-file",
        "application/octet-stream",
    ]

    func mountApplePayWeb(on router: inout Router) {
        router.post(
            "/v1/apple-pay/merchant-sessions", scope: .client, summary: "createMerchantSession",
            handler: endpoint(createMerchantSession))
        router.post(
            "/v1/merchant-identity/csr", scope: .server, summary: "createMerchantIdentityCSR",
            handler: endpoint(idempotent: true, createIdentityCSR))
        router.post(
            "/v1/merchant-identity/certificate", scope: .server, accepts: Self.certificateMediaTypes,
            summary: "uploadMerchantIdentityCertificate", handler: endpoint(idempotent: true, uploadIdentityCertificate)
        )
        router.put(
            "/v1/apple-pay/domains", scope: .server, summary: "putApplePayDomains", handler: endpoint(putDomains))
        router.get(
            "/v1/apple-pay/domains", scope: .server, summary: "getApplePayDomains", handler: endpoint(getDomains))
        router.put(
            "/v1/apple-pay/domain-association", scope: .server, accepts: ["text/plain", "application/octet-stream"],
            summary: "putDomainAssociation", handler: endpoint(putDomainAssociation))
        router.get(Self.domainAssociationPath, summary: "getDomainAssociation", handler: domainAssociation)
    }

    // MARK: Merchant validation

    func createMerchantSession(_ call: Call) throws -> HTTPResponse {
        // A browser sends its page's Origin; the CORS layer already refused one the merchant does not list.
        guard let origin = call.request.headers["Origin"], call.merchant.webOrigins.contains(origin) else {
            throw HTTPAPIError(
                status: .forbidden, type: .authentication, code: .init(rawValue: "origin_not_allowed"),
                message: "merchant validation needs an Origin among the merchant's configured web origins")
        }
        let body = try RequestBody(call, required: true)
        let validationURL = try body.requiredString("validation_url", max: FieldLimits.url)
        let domain = try body.requiredString("domain", max: FieldLimits.domainNameBytes.upperBound)
        let displayName = try body.string(
            "display_name", max: FieldLimits.displayName.upperBound)
        let merchantIdentifier = try body.string(
            "merchant_identifier", max: FieldLimits.merchantIdentifier.upperBound)
        guard let merchantValidation else {
            throw GatewayError(.applePayValidationFailed, "merchant validation is not configured on this gateway")
        }
        let session = try merchantValidation.merchantSession(
            merchant: call.merchant, validationURL: validationURL, domain: domain, displayName: displayName,
            merchantIdentifier: merchantIdentifier)
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": JSONCoding.contentType, "Cache-Control": "no-store"], body: session)
    }

    // MARK: Merchant identity

    func createIdentityCSR(_ call: Call) throws -> HTTPResponse {
        _ = try RequestBody(call, required: false)
        let csr = try gateway.keys.createIdentityCSR(
            merchant: call.merchant, idempotencyKey: call.idempotencyKey, scope: call.scope)
        return Wire.response(Self.csrObject(csr))
    }

    func uploadIdentityCertificate(_ call: Call) throws -> HTTPResponse {
        var certificate = Array(call.request.body)
        if call.request.headers.mediaType == "application/json" {
            let body = try RequestBody(call, required: true)
            let text = try body.requiredString("certificate", max: FieldLimits.certificatePEM.upperBound)
            if text.contains("-----BEGIN") {
                certificate = Array(text.utf8)
            } else if let der = Data(base64Encoded: text, options: .ignoreUnknownCharacters) {
                certificate = Array(der)
            } else {
                throw GatewayError(
                    .certificateInvalid, "a PEM certificate or the base64 of a DER one", param: "certificate")
            }
        } else if certificate.isEmpty {
            throw GatewayError(.certificateInvalid, "the body is Apple's certificate", param: "certificate")
        }
        let key = try gateway.keys.attachIdentityCertificate(
            merchant: call.merchant, certificate: certificate, idempotencyKey: call.idempotencyKey, scope: call.scope)
        return Wire.response(Self.keyStatusObject(key))
    }

    // MARK: Domains

    func putDomains(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let list = body.raw("domains") else { throw body.missing("domains") }
        guard case .array(let items) = list, case let domains = items.compactMap(\.string), domains.count == items.count
        else { throw body.invalid("domains", "an array of host names") }
        guard domains.allSatisfy({ FieldLimits.fits($0, FieldLimits.domainNameBytes.upperBound) }) else {
            throw body.invalid("domains", "host names of at most \(FieldLimits.domainNameBytes.upperBound) characters")
        }
        let stored = try gateway.merchants.setApplePayDomains(
            merchantID: call.merchant.id, domains: domains, scope: call.scope)
        return Wire.response(["domains": stored])
    }

    func putDomainAssociation(_ call: Call) throws -> HTTPResponse {
        try gateway.merchants.setDomainAssociation(merchantID: call.merchant.id, file: call.request.body)
        return Wire.response(["bytes": call.request.body.count, "path": Self.domainAssociationPath])
    }

    /// `GET /.well-known/apple-developer-merchantid-domain-association`: the file of the merchant that registered
    /// the request's `Host`, as uploaded; 404 for any other host.
    func domainAssociation(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let file: Data?
        do { file = try request.headers["Host"].flatMap { try gateway.merchants.domainAssociation(host: $0) } } catch {
            throw GatewayAPIError.from(error)
        }
        guard let file else {
            throw GatewayAPIError.make(
                .notFound, .invalidRequest, "not_found", "no domain association file for this host")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: file)
    }

    // MARK: Wire shapes shared with the merchant-key routes

    static func csrObject(_ csr: MerchantKeyCSR) -> [String: Any] {
        [
            "id": csr.id, "type": csr.type, "purpose": csr.purpose, "csr_pem": csr.csrPEM,
            "public_key_hash": csr.publicKeyHash,
        ]
    }

    static func keyStatusObject(_ key: MerchantKeyStatus) -> [String: Any] {
        [
            "id": key.id, "type": key.type, "purpose": key.purpose, "public_key_hash": key.publicKeyHash,
            "merchant_identifier_hash": Wire.value(key.merchantIdentifierHash), "not_before": Wire.time(key.notBefore),
            "not_after": Wire.time(key.notAfter), "active": key.active,
        ]
    }
}
