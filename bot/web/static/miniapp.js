// The Telegram Mini App's launch: Telegram puts its signed launch data (initData) in the
// address's fragment; it is posted to the server, which checks it with the bot's token.
(function () {
  var data = new URLSearchParams(window.location.hash.slice(1)).get("tgWebAppData") || "";
  var form = document.getElementById("launch");
  if (data && form) {
    form.elements.init_data.value = data;
    form.submit();
  }
})();
