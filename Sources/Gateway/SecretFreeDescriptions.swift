import Foundation

/// Masks a credential for descriptions: its prefix up to the last `_` and its last four characters.
package func maskedCredential(_ value: String) -> String {
    let prefix = value.lastIndex(of: "_").map { String(value[...$0]) } ?? ""
    return prefix + "…" + String(value.suffix(4))
}

extension DueWebhook: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The event, endpoint and attempt count; never the signing secrets.
    public var description: String {
        "DueWebhook(\(event.id) \(event.type) to \(WebhookDispatcher.redactedEndpoint(url)), \(secrets.count) secret(s), \(attempts) attempt(s))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Everything but the signing secrets (only their count).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "event": event, "url": WebhookDispatcher.redactedEndpoint(url), "secretCount": secrets.count,
                "attempts": attempts,
            ])
    }
}

extension MerchantCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The ids with the keys masked (`ak_…wxyz`, `sk_test_…wxyz`); print the fields themselves to show them.
    public var description: String {
        "MerchantCredentials(\(merchantID), \(appID), app_key \(maskedCredential(appKey)), secret_key \(maskedCredential(secretKey)))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// The ids and the masked keys.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "merchantID": merchantID, "appID": appID, "appKey": maskedCredential(appKey),
                "secretKey": maskedCredential(secretKey),
            ])
    }
}

extension RotatedKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The merchant and the new key masked (`sk_live_…wxyz`); print ``key`` itself to show it once.
    public var description: String { "RotatedKey(\(merchantID), key \(maskedCredential(key)))" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// The merchant, the masked key and the overlap's end.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "merchantID": merchantID, "key": maskedCredential(key),
                "previousKeyExpiresAt": previousKeyExpiresAt as Any,
            ])
    }
}

extension ConsoleSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The session id and merchant, never the CSRF token.
    public var description: String { "ConsoleSession(\(id), merchant \(merchant.id), csrf_token (hidden))" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// The session id, the merchant id and the expiry; no CSRF token.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "merchantID": merchant.id, "expiresAt": expiresAt])
    }
}
