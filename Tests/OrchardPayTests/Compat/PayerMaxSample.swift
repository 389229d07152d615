// PayerMax's iOS sample (seed 004, S004 130–160 and 211–290), typed in as the seed shows it with only the import
// changed (`import PayerMaxApplePay` → `import OrchardPayCompat`, PassKit → PassKitShim where PassKit is absent).
// Where the seed cannot compile as written, the comment at the place says why and what the smallest change is.
// CompatTests runs it through SimulatedPaymentSheet against a real gateway.

import Foundation
import OrchardPayCompat

#if canImport(PassKit)
    import PassKit
#else
    import PassKitShim
#endif
#if canImport(UIKit)
    import UIKit
#endif

// S004 130–160. `@main` is left out: a test bundle has its own entry point. Without UIKit (Linux), the app
// delegate's body runs in `applicationDidFinishLaunching`, `CheckoutViewController` is an NSObject on the main actor
// (as UIViewController is) and `viewDidLoad` checks availability without the button. The seed never declares the
// `orderToken` it stores and returns (S004 236, 267): it is a `var` here.
#if canImport(UIKit)
    class PayerMaxAppDelegate: UIResponder, UIApplicationDelegate {
        func application(
            _ application: UIApplication,
            didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
        ) -> Bool {

            // 使用您在 PayerMax 商户后台获取的 Publishable Key 完成 SDK 初始化
            PMAPIClient.defaultPublishableKey = "your_publishable_key"

            return true
        }
    }

    class CheckoutViewController: UIViewController {
        let applePayButton = PKPaymentButton(paymentButtonType: .buy, paymentButtonStyle: .black)
        var orderToken = ""

        override func viewDidLoad() {
            super.viewDidLoad()

            // 仅在设备支持 Apple Pay 且用户已绑卡时展示按钮
            if PMApplePayConfiguration.canMakePayments() {
                applePayButton.addTarget(self, action: #selector(handleApplePayButtonTapped), for: .touchUpInside)
                view.addSubview(applePayButton)
            }
        }
    }
#else
    class PayerMaxAppDelegate {
        func applicationDidFinishLaunching() -> Bool {

            // 使用您在 PayerMax 商户后台获取的 Publishable Key 完成 SDK 初始化
            PMAPIClient.defaultPublishableKey = "your_publishable_key"

            return true
        }
    }

    @MainActor
    class CheckoutViewController: NSObject {
        var orderToken = ""
        var showsApplePayButton = false

        func viewDidLoad() {
            // 仅在设备支持 Apple Pay 且用户已绑卡时展示按钮
            if PMApplePayConfiguration.canMakePayments() {
                showsApplePayButton = true
            }
        }
    }
#endif

// S004 211–254. The seed puts `handleApplePayButtonTapped` at the top level, where `@objc` is an error and
// `self` is nothing: it goes in an extension of `CheckoutViewController`. Without the Objective-C runtime
// (Linux) `@objc` is left out.
extension CheckoutViewController {
    #if canImport(ObjectiveC)
        @objc func handleApplePayButtonTapped() { tapped() }
    #else
        func handleApplePayButtonTapped() { tapped() }
    #endif

    private func tapped() {
        // 从您的服务端获取订单参数
        // 您的服务端负责调用 PayerMax /applyApplePaySession 接口并将结果返回给 App
        fetchOrderParamsFromYourServer { [weak self] result in
            guard let self = self else { return }
            switch result {
            case .success(let orderParams):
                // orderParams 包含服务端返回的 amount、currency、country、merchantId、networks、orderToken
                let paymentRequest = PMApplePayConfiguration.paymentRequest(
                    withMerchantIdentifier: orderParams.merchantId, // 来自服务端
                    country: orderParams.country,                   // 来自服务端
                    currency: orderParams.currency                  // 来自服务端
                )

                // 配置付款请求上的摘要行
                // 最后一行应代表您的公司；它将以"Pay"一词开头（即"Pay Your Company $50"）
                // 金额来自服务端，不得由客户端自行决定
                paymentRequest.paymentSummaryItems = [
                    PKPaymentSummaryItem(
                        label: "Your Company Name",
                        amount: NSDecimalNumber(string: orderParams.amount) // 来自服务端
                    )
                ]

                // 保存 orderToken 供后续 /orderAndPay 使用
                self.orderToken = orderParams.orderToken

                // 初始化 PMApplePayContext 并展示 Apple Pay 面板
                // 注意：present 必须由用户手势直接触发，不能在异步操作后延迟调用
                if let applePayContext = PMApplePayContext(
                    paymentRequest: paymentRequest,
                    delegate: self
                ) {
                    applePayContext.presentApplePay(on: self)
                } else {
                    print("初始化 Apple Pay 失败，请检查 Merchant ID 配置")
                }

            case .failure(let error):
                print("获取订单参数失败: \(error.localizedDescription)")
            }
        }
    }
}

// S004 255–290, as written.
// MARK: - PMApplePayContextDelegate

extension CheckoutViewController: PMApplePayContextDelegate {

    // 用户授权后，SDK 回调此方法，您需要返回服务端的 orderToken 用于后续 /orderAndPay
    func applePayContext(
        _ context: PMApplePayContext,
        didCreatePaymentMethod paymentMethod: PMPaymentMethod,
        paymentInformation: PKPayment
    ) async throws -> String {
        // 返回创建订单时服务端下发的 orderToken
        // SDK 将携带此 token 及加密 payload 自动调用 PayerMax /orderAndPay
        return self.orderToken
    }

    // 支付完成后，SDK 回调此方法，status 为最终支付结果
    func applePayContext(
        _ context: PMApplePayContext,
        didCompleteWith status: PMApplePayContext.PaymentStatus,
        error: Error?
    ) {
        switch status {
        case .success:
            // 支付成功，展示订单确认页面
            print("支付成功")
        case .error:
            // 支付失败，展示错误提示
            print("支付失败: \(error?.localizedDescription ?? "")")
        case .userCancellation:
            // 用户主动取消
            break
        @unknown default:
            break
        }
    }
}
