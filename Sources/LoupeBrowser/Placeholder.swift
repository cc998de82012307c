// LoupeBrowser
