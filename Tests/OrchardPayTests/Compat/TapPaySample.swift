// TapPay's iOS sample (seed 000, the Swift column), typed in as the seed shows it with only the import changed
// (`import TPDirect` → `import OrchardPayCompat`, PassKit → PassKitShim where PassKit is absent). Where the seed
// cannot compile as written, the comment at the place says why and what the smallest change is.
// CompatTests runs it through SimulatedPaymentSheet; the seed's `print` lines are what the tests read
// (`SeedConsole`).

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

// The seed declares `ViewController`'s properties in four separate snippets (`var applePay : TPDApplePay!`,
// `var merchant`, `var consumer`, `var cart`, S000 85, 515, 567, 612) and `var applePayButton` (S000 430); one
// class holds them here. Without UIKit (Linux) it is an NSObject on the main actor, as UIViewController is.
#if canImport(UIKit)
    class ViewController: UIViewController {
        var applePay : TPDApplePay!
        var applePayButton : PKPaymentButton!
        var merchant : TPDMerchant!
        var consumer : TPDConsumer!
        var cart     : TPDCart!
    }
#else
    @MainActor
    class ViewController: NSObject {
        var applePay : TPDApplePay!
        var merchant : TPDMerchant!
        var consumer : TPDConsumer!
        var cart     : TPDCart!
    }
#endif

// S000 49–54. `UIApplicationLaunchOptionsKey` is the Swift 4.1 name; current SDKs only have
// `UIApplication.LaunchOptionsKey`, the one change. Without UIKit the body runs in `applicationDidFinishLaunching`.
#if canImport(UIKit)
    class AppDelegate: UIResponder, UIApplicationDelegate {
        func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool {
          // Override point for customization after application launch.
          TPDSetup.setWithAppId("APP_ID", withAppKey: "APP_KEY", with: TPDServerType.sandBox)

          return true
        }
    }
#else
    class AppDelegate {
        func applicationDidFinishLaunching() -> Bool {
          // Override point for customization after application launch.
          TPDSetup.setWithAppId("APP_ID", withAppKey: "APP_KEY", with: TPDServerType.sandBox)

          return true
        }
    }
#endif

extension ViewController {
    // S000 532–538, 579–580, 629–634 and 656–664 are statements at the top level of the seed; they run in these
    // methods here.
    func setupMerchant() {
        merchant = TPDMerchant()
        merchant.merchantName               = "TapPay!";
        merchant.merchantCapability         = .capability3DS;
        merchant.applePayMerchantIdentifier = "merchant.apple.pay";
        merchant.countryCode                = "TW";
        merchant.currencyCode               = "TWD";
        merchant.supportedNetworks          = [.amex, .masterCard, .visa, .JCB]
    }

    func setupConsumer() {
        consumer = TPDConsumer()
        consumer.requiredShippingAddressFields  = [.email, .name, .phone]
        consumer.requiredBillingAddressFields   = [.postalAddress]
    }

    func setupCart() {
        cart = TPDCart()

        let book = TPDPaymentItem(itemName: "Initial Charge", withAmount: NSDecimalNumber(string: "100.00"))
        cart.add(book)
    }

    func setupDeferredCart() {
        cart = TPDCart()
        cart.isAmountPending = true
        cart.isShowTotalAmount = false
        // 設定顯示金額品項
        let initialCharge = TPDPaymentItem(itemName: "Initial Charge", withAmount: NSDecimalNumber(string: "100.00"))
        cart.add(initialCharge)

        // 設定待處理品項
        let improvementSurcharge = TPDPaymentItem.pendingPaymentItem(withItemName: "NT$5 per miles")
        cart.add(improvementSurcharge)
    }
}

// S000 483–500. `PKPaymentButton`, `view`, `#selector` and `@objc` need UIKit and the Objective-C runtime; without
// them the button's action is the same body without `@objc` and its `sender`.
#if canImport(UIKit)
    extension ViewController {
        func paymentButtonSetting() {

            if (TPDApplePay.canMakePayments(usingNetworks: self.merchant.supportedNetworks)) {
                applePayButton = PKPaymentButton.init(paymentButtonType: .buy, paymentButtonStyle: .black)
            } else {
                applePayButton = PKPaymentButton.init(paymentButtonType: .setUp, paymentButtonStyle: .black)
            }

            view.addSubview(applePayButton)
            applePayButton.center = view.center

            applePayButton.addTarget(self, action: #selector(ViewController.didClickBuyButton(sender:)), for: .touchUpInside)

        }

        @objc func didClickBuyButton(sender:PKPaymentButton) {

            applePay = TPDApplePay.setupWthMerchant(merchant, with: consumer, with: cart, withDelegate: self)

            applePay.startPayment()

        }
    }
#else
    extension ViewController {
        func canMakePayments() -> Bool {
            TPDApplePay.canMakePayments(usingNetworks: self.merchant.supportedNetworks)
        }

        func didClickBuyButton() {

            applePay = TPDApplePay.setupWthMerchant(merchant, with: consumer, with: cart, withDelegate: self)

            applePay.startPayment()

        }
    }
#endif

// S000 299–386, as written but for one change: the seed's `didReceivePrime` method (S000 363) has no `func`
// keyword, a syntax error; it is added.
extension ViewController :TPDApplePayDelegate {

  func tpdApplePayDidStartPayment(_ applePay: TPDApplePay!) {
    print("=====================================================")
    print("Apple Pay On Start")
    print("=====================================================\n\n")
  }

  func tpdApplePay(_ applePay: TPDApplePay!, didSuccessPayment result: TPDTransactionResult!) {
    print("=====================================================")
    print("Apple Pay Did Success ==> Amount : \(result.amount.stringValue)")
    print("shippingContact.name : \(applePay.consumer.shippingContact?.name?.givenName) \( applePay.consumer.shippingContact?.name?.familyName)")
    print("shippingContact.emailAddress : \(applePay.consumer.shippingContact?.emailAddress)")
    print("shippingContact.phoneNumber : \(applePay.consumer.shippingContact?.phoneNumber?.stringValue)")
    print("Shipping Method.identifier : \(applePay.cart.shippingMethod.identifier)")
    print("Shipping Method.detail : \(applePay.cart.shippingMethod.detail)")
    print("=====================================================\n\n")
  }

  func tpdApplePay(_ applePay: TPDApplePay!, didFailurePayment result: TPDTransactionResult!) {
    print("=====================================================")
    print("Apple Pay Did Failure ==> Message : \(result.message), ErrorCode : \(result.status)")
    print("=====================================================\n\n")
  }

  func tpdApplePayDidCancelPayment(_ applePay: TPDApplePay!) {
    print("=====================================================")
    print("Apple Pay Did Cancel")
    print("=====================================================\n\n")
  }

  func tpdApplePayDidFinishPayment(_ applePay: TPDApplePay!) {
    print("=====================================================")
    print("Apple Pay Did Finish")
    print("=====================================================\n\n")
  }

  func tpdApplePay(_ applePay: TPDApplePay!, didSelect shippingMethod: PKShippingMethod!) {
    print("=====================================================")
    print("======> didSelectShippingMethod: ")
    print("Shipping Method.identifier : \(shippingMethod.identifier)")
    print("Shipping Method.detail : \(shippingMethod.detail)")
    print("=====================================================\n\n")
  }

  func tpdApplePay(_ applePay: TPDApplePay!, didSelect paymentMethod: PKPaymentMethod!, cart: TPDCart!) -> TPDCart! {
    print("=====================================================");
    print("======> didSelectPaymentMethod: ");
    print("=====================================================\n\n");
    if paymentMethod.type == .debit {
      self.cart.add(TPDPaymentItem(itemName: "Discount", withAmount: NSDecimalNumber(string: "-1.00")))
    }
    return self.cart;
  }

  func tpdApplePay(_ applePay: TPDApplePay!, canAuthorizePaymentWithShippingContact shippingContact: PKContact!) -> Bool {
    print("=====================================================")
    print("======> canAuthorizePaymentWithShippingContact ")
    print("shippingContact.name : \(applePay.consumer.shippingContact?.name?.givenName) \( applePay.consumer.shippingContact?.name?.familyName)")
    print("shippingContact.emailAddress : \(shippingContact.emailAddress)")
    print("shippingContact.phoneNumber : \(shippingContact.phoneNumber?.stringValue)")
    print("=====================================================\n\n")
    return true;
  }
  func tpdApplePay(_ applePay: TPDApplePay!, didReceivePrime prime: String!, withExpiryMillis expiryMillis: Int, withCardInfo cardInfo: TPDCardInfo, withMerchantReferenceInfo merchantReferenceInfo: [AnyHashable : Any]!) {

    // 1. Send Your Prime To Your Server, And Handle Payment With Result
    // ...
    print("=====================================================");
    print("======> didReceivePrime");
    print("Prime : \(prime!)");
    print("Expiry Millis : \(expiryMillis)");
    print("total Amount :   \(applePay.cart.totalAmount!)")
    print("Client IP : \(applePay.consumer.clientIP!)")
    print("shippingContact.name : \(applePay.consumer.shippingContact?.name?.givenName) \(applePay.consumer.shippingContact?.name?.familyName)");
    print("shippingContact.emailAddress : \(applePay.consumer.shippingContact?.emailAddress)");
    print("shippingContact.phoneNumber : \(applePay.consumer.shippingContact?.phoneNumber?.stringValue)");
    let paymentMethod = self.consumer.paymentMethod!
    print("type : \(paymentMethod.type.rawValue)")
    print("Network : \(paymentMethod.network!.rawValue)")
    print("Display Name : \(paymentMethod.displayName!)")
    print("===================================================== \n\n");

    // 2. If Payment Success, applePay.
    let paymentResult = true;
    applePay.showPaymentResult(paymentResult)
    }
}
