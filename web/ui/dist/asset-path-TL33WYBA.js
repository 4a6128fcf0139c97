(()=>{window.EXCALIDRAW_ASSET_PATH=location.origin+"/assets/";})();
