module.exports = {
  displayName: 'chain-wallet',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
