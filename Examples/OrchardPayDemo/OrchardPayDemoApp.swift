// OrchardPayDemo: a small SwiftUI app paying a sandbox Orchard gateway with both of OrchardPay's flows.
// Apple platforms only (PassKit, SwiftUI); it is not a target of the package and is not built on Linux.
// See README.md next to this file for how to run it.

import OrchardPay
import PassKit
import SwiftUI

@main
struct OrchardPayDemoApp: App {
    init() {
        // TapPay's TPDSetup: the app id and app key are client credentials, safe to ship.
        OrchardPaySDK.setup(
            appID: DemoSettings.appID, appKey: DemoSettings.appKey, environment: .sandbox,
            gatewayURL: DemoSettings.gatewayURL)
        OrchardPaySDK.logHandler = { print($0) }  // the SDK never logs the token, DPAN, cryptogram or prime
    }

    var body: some Scene {
        WindowGroup { ContentView() }
    }
}

/// Where the sandbox gateway is and its sandbox credentials (`orchard merchant show`).
enum DemoSettings {
    static let gatewayURL = URL(string: "https://orchard-sandbox.example.com")!
    static let appID = "app_REPLACE_ME"
    static let appKey = "ak_REPLACE_ME"
    static let merchantIdentifier = "merchant.dev.orchard.sandbox"
}

struct ContentView: View {
    @StateObject private var store = DemoStore()

    var body: some View {
        NavigationStack {
            Form {
                Section("Prime flow (TapPay style)") {
                    LabeledContent("Book", value: "TWD 100.00")
                    Toggle("Simulated sheet (no device wallet)", isOn: $store.simulated)
                    if OrchardPaySDK.canMakePayments() || store.simulated {
                        PayWithApplePayButton(.buy) { store.payByPrime() }
                            .frame(height: 44)
                    } else {
                        PayWithApplePayButton(.setUp) { PKPassLibrary().openPaymentSetup() }
                            .frame(height: 44)
                    }
                }
                Section("Session flow (PayerMax style)") {
                    LabeledContent("Tea, 2 boxes", value: "TWD 250.00")
                    PayWithApplePayButton(.checkout) { Task { await store.payOrderSession() } }
                        .frame(height: 44)
                }
                Section("Events") {
                    ForEach(Array(store.events.enumerated()), id: \.offset) { Text($0.element).font(.footnote) }
                }
            }
            .navigationTitle("Orchard Coffee")
        }
    }
}
