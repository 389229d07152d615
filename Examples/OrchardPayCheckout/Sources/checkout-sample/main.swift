// checkout-sample: runs TeaShopCheckout's two flows against a sandbox gateway and the merchant backend sample, on
// the simulated sheet (a device uses PassKitPaymentSheet instead). Prints one JSON line per flow; exit 0 when
// both were charged.
//
//   checkout-sample --gateway http://127.0.0.1:8080 --backend http://127.0.0.1:9000 \
//                   --app-id app_… --app-key ak_… --merchant-identifier merchant.…

import Foundation
import OrchardPay
import TeaShopCheckout

@MainActor
func run() async -> Int32 {
    var options: [String: String] = [:]
    var arguments = CommandLine.arguments.dropFirst()
    while let name = arguments.popFirst() {
        guard name.hasPrefix("--"), let value = arguments.popFirst() else {
            FileHandle.standardError.write(Data("usage: checkout-sample --gateway URL --backend URL --app-id ID --app-key KEY --merchant-identifier ID\n".utf8))
            return 2
        }
        options[String(name.dropFirst(2))] = value
    }
    guard let gateway = options["gateway"].flatMap(URL.init(string:)), let backend = options["backend"].flatMap(URL.init(string:)),
        let appID = options["app-id"], let appKey = options["app-key"], let merchantIdentifier = options["merchant-identifier"]
    else {
        FileHandle.standardError.write(Data("checkout-sample needs --gateway, --backend, --app-id, --app-key and --merchant-identifier\n".utf8))
        return 2
    }
    // TapPay's TPDSetup: the app id and app key are client credentials, safe to ship in an app.
    OrchardPaySDK.setup(appID: appID, appKey: appKey, environment: .sandbox, gatewayURL: gateway)
    var contact = Contact()
    contact.givenName = "Mei"
    contact.familyName = "Lin"
    contact.emailAddress = "mei@example.com"
    contact.addressLines = ["1-1 Umeda"]
    contact.locality = "Osaka"
    contact.postalCode = "530-0001"
    contact.countryCode = "JP"
    // The customer: an address in Japan (air mail), the coupon, a debit card, Face ID.
    var steps: [SimulatedPaymentSheet.Step] = [
        .selectShippingContact(contact), .enterCouponCode("TEA10"), .selectPaymentMethod(.debit), .authorize,
    ]
    let shop = TeaShopCheckout(backend: MerchantBackend(url: backend), merchantIdentifier: merchantIdentifier) {
        let sheet = SimulatedPaymentSheet(steps: steps, card: .visaDebit)
        steps = [.authorize]
        return sheet
    }
    let run = UUID().uuidString.prefix(8)
    let outcomes = [
        await shop.payByPrime(orderNumber: "sample-\(run)"), await shop.payOrderSession(outTradeNo: "sample-\(run)-s"),
    ]
    for outcome in outcomes {
        let line: [String: Any] = [
            "flow": outcome.flow, "succeeded": outcome.succeeded, "code": outcome.code ?? NSNull(),
            "amount": outcome.amount.map { "\($0)" } ?? NSNull(), "payment_id": outcome.paymentID ?? NSNull(),
        ]
        let data = try! JSONSerialization.data(withJSONObject: line, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
    return outcomes.allSatisfy(\.succeeded) ? 0 : 1
}

exit(await run())
