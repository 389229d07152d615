import OrchardHTTP
import Foundation
import Gateway

/// The listing routes of the console's Keys and Apple Pay page (`openapi.yaml`, tags "Merchant keys" and
/// "Apple Pay on the Web"): the keys with their certificates' expiry, the last step of a rotation, the domains.
extension GatewayAPI {
    func listMerchantKeys(_ call: Call) throws -> HTTPResponse {
        let inventory = try gateway.keys.keyInventory(merchantID: call.merchant.id)
        return Wire.response([
            "data": inventory.keys.map(Self.keyEntryObject),
            "warnings": inventory.warnings.map { warning -> [String: Any] in
                [
                    "key_id": warning.keyID, "purpose": warning.purpose, "not_after": Wire.time(warning.notAfter),
                    "days_left": warning.daysLeft, "expired": warning.expired,
                    "message": warning.expired
                        ? "the \(warning.purpose) certificate of \(warning.keyID) has expired"
                        : "the \(warning.purpose) certificate of \(warning.keyID) expires in \(warning.daysLeft) days",
                ]
            },
        ])
    }

    func retireMerchantKey(_ call: Call) throws -> HTTPResponse {
        let id = try call.context.parameter("id")
        try gateway.keys.retireProcessingKey(merchantID: call.merchant.id, keyID: id, scope: call.scope)
        let inventory = try gateway.keys.keyInventory(merchantID: call.merchant.id)
        guard let key = inventory.keys.first(where: { $0.id == id && $0.purpose == "processing" }) else {
            throw GatewayError(.notFound, "no such processing key", param: "id")
        }
        return Wire.response(Self.keyEntryObject(key))
    }

    func getDomains(_ call: Call) throws -> HTTPResponse {
        Wire.response(["domains": try gateway.merchants.merchant(id: call.merchant.id).applePayDomains])
    }

    static func keyEntryObject(_ key: MerchantKeyEntry) -> [String: Any] {
        [
            "id": key.id, "purpose": key.purpose, "type": key.type, "state": key.state.rawValue,
            "public_key_hash": key.publicKeyHash, "not_before": Wire.time(key.notBefore),
            "not_after": Wire.time(key.notAfter), "created_at": Wire.time(key.createdAt),
        ]
    }
}
