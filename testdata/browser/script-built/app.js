document.getElementById("root").innerHTML =
  '<h1>Built by the script</h1><p>Only a browser that runs this script sees these words.</p><a href="/pricing">Pricing</a>';
